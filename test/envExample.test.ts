import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { ConfigReader } from "@herald/runtime/config";
import { describe, expect, it } from "vitest";
import { loadConfig as gatewayConfig } from "../services/api-gateway/src/config.ts";
import { loadConfig as dispatcherConfig } from "../services/dispatcher/src/config.ts";
import { loadConfig as senderConfig } from "../services/sender/src/config.ts";
import { root } from "./support/dockerfile.ts";

/**
 * `.env.example` says it lists every variable the services read, with its default. Checked
 * against each service's own configuration: every name its `loadConfig` reads is there (set,
 * or commented out where there is no default), and the values set are the defaults (the
 * configuration made from them equals the one made from nothing), so neither drifts unseen.
 */
const text = readFileSync(join(root, ".env.example"), "utf8");
const set = Object.fromEntries(
  [...text.matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]),
);
const documented = new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
/** What has no default: the services refuse to start without it. */
const required = { ENCRYPTION_KEY: randomBytes(32).toString("base64") };

const services = {
  "api-gateway": gatewayConfig,
  dispatcher: dispatcherConfig,
  sender: senderConfig,
} as Record<string, (env: Record<string, string | undefined>) => unknown>;

/** The names `load` reads, asked through an environment that records each name looked up. */
function namesRead(load: (env: Record<string, string | undefined>) => unknown): string[] {
  const read = new Set<string>();
  const env = new Proxy({ ...required } as Record<string, string | undefined>, {
    get(target, name) {
      if (typeof name === "string") read.add(name);
      return Reflect.get(target, name);
    },
  });
  load(env);
  return [...read].filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name));
}

describe(".env.example", () => {
  it.each(Object.keys(services))("names every variable the %s reads", (service) => {
    const missing = namesRead(services[service]!).filter((name) => !documented.has(name));
    expect(missing).toEqual([]);
  });

  it.each(Object.keys(services))("sets each variable of the %s to its default", (service) => {
    const load = services[service]!;
    expect(load({ ...set, ...required })).toEqual(load({ ...required }));
  });

  it("sets nothing no service reads", () => {
    const read = new Set(Object.values(services).flatMap(namesRead));
    expect(Object.keys(set).filter((name) => !read.has(name))).toEqual([]);
  });
});

/**
 * docs/configuration.md's table says, for every variable, which services read it and its
 * default. Checked the same way: each name a service's `loadConfig` reads has a row naming that
 * service; each row is read by the services it names; and each default written there gives
 * the configuration the service makes from nothing. The OTEL_* rows are the OpenTelemetry SDK's,
 * which the services start (packages/runtime/src/telemetry.ts), not their `loadConfig`'s.
 */
type Row = { name: string; readBy: string[]; defaults: Record<string, string> | null; cell: string };
const letters: Record<string, string> = { g: "api-gateway", d: "dispatcher", s: "sender" };

function configurationTable(): Row[] {
  const doc = readFileSync(join(root, "docs", "configuration.md"), "utf8");
  return [...doc.matchAll(/^\| `([A-Z][A-Z0-9_]*)` *\| ([gds ]+?) *\| (.+?) *\| .* \|$/gm)].map((m) => {
    const [, name = "", by = "", cell = ""] = m;
    const readBy = by.split(" ").map((l) => letters[l]!);
    // "none", "unset": no default. One `value` for every service, one per service in the
    // order they are named ("`api-gateway`, `dispatcher`, `sender`"), or "`8081` (d), `8082` (s)".
    if (/^(none|unset)\b/.test(cell)) return { name, readBy, defaults: null, cell };
    const tagged = [...cell.matchAll(/`([^`]*)` \(([gds])\)/g)];
    const values = [...cell.matchAll(/`([^`]*)`/g)].map((v) => v[1]!);
    const defaults = Object.fromEntries(
      tagged.length
        ? tagged.map(([, v, l]) => [letters[l!]!, v!])
        : readBy.map((service, i) => [service, values.length === 1 ? values[0]! : values[i]!]),
    );
    return { name, readBy, defaults, cell };
  });
}

const rows = configurationTable();
const byName = new Map(rows.map((r) => [r.name, r]));
const isOtel = (name: string) => name.startsWith("OTEL_");

/** The sources of the OpenTelemetry SDK the services start, where it reads OTEL_* variables. */
function otelSources(): string {
  const require = createRequire(join(root, "packages", "runtime", "package.json"));
  const sdk = dirname(require.resolve("@opentelemetry/sdk-node/package.json"));
  const configuration = dirname(
    createRequire(join(sdk, "package.json")).resolve("@opentelemetry/configuration/package.json"),
  );
  const read = (dir: string): string =>
    readdirSync(dir, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith(".js"))
      .map((e) => readFileSync(join(e.parentPath, e.name), "utf8"))
      .join("\n");
  return [
    read(join(sdk, "build", "src")),
    read(join(configuration, "build", "src")),
    readFileSync(join(root, "packages", "runtime", "src", "telemetry.ts"), "utf8"),
  ].join("\n");
}

/** A default as the environment would give it: `$PORT` is the port's, a path is the checkout's. */
function asEnv(name: string, value: string): string {
  if (name === "WEB_DIST") return join(root, value);
  return value.replace("$PORT", byName.get("PORT")?.defaults?.["api-gateway"] ?? "");
}

describe("docs/configuration.md", () => {
  it("has a table of every variable", () => {
    expect(rows.length).toBeGreaterThan(40);
    expect(new Set(rows.map((r) => r.name)).size).toBe(rows.length);
  });

  it.each(Object.keys(services))("names every variable the %s reads, as read by it", (service) => {
    const missing = namesRead(services[service]!).filter(
      (name) => !byName.get(name)?.readBy.includes(service),
    );
    expect(missing).toEqual([]);
  });

  it("names no variable that the services it names do not read", () => {
    const read = Object.fromEntries(
      Object.entries(services).map(([s, load]) => [s, new Set(namesRead(load))]),
    );
    const otel = otelSources();
    const unread = rows.flatMap((r) =>
      isOtel(r.name)
        ? otel.includes(r.name)
          ? []
          : [r.name]
        : r.readBy.filter((s) => !read[s]!.has(r.name)).map((s) => `${r.name} (${s})`),
    );
    expect(unread).toEqual([]);
  });

  it.each(rows.filter((r) => !isOtel(r.name)).map((r) => [r.name, r] as const))(
    "gives %s the default the code has",
    (name, row) => {
      if (row.defaults === null) {
        // No default: `.env.example` (whose values are checked to be the defaults) sets none.
        expect(set[name] ?? "", `${name}: .env.example sets a default`).toBe("");
        if (/required/.test(row.cell))
          for (const service of row.readBy) {
            const env = { ...required } as Record<string, string | undefined>;
            delete env[name];
            expect(() => services[service]!(env), `${service} starts without ${name}`).toThrow(name);
          }
        return;
      }
      for (const service of row.readBy) {
        const value = row.defaults[service];
        expect(value, `${name}: no default for ${service}`).toBeDefined();
        const load = services[service]!;
        expect(load({ ...required, [name]: asEnv(name, value!) }), `${name} in the ${service}`).toEqual(
          load({ ...required }),
        );
      }
      // The level is checked, then handed to the logger, not kept in the configuration.
      if (name === "LOG_LEVEL") expect(new ConfigReader({}).logLevel()).toBe(row.defaults["api-gateway"]);
    },
  );

  it("names each service as it names itself on its spans (OTEL_SERVICE_NAME)", () => {
    const row = byName.get("OTEL_SERVICE_NAME")!;
    for (const service of row.readBy) {
      const main = readFileSync(join(root, "services", service, "src", "main.ts"), "utf8");
      expect(main).toContain(`runService(${JSON.stringify(row.defaults?.[service])}`);
    }
  });
});
