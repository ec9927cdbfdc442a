import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../services/api-gateway/src/config.ts";
import { loadConfig as dispatcherConfig } from "../services/dispatcher/src/config.ts";
import { loadConfig as senderConfig } from "../services/sender/src/config.ts";

/**
 * No Docker engine runs where the tests run, so the compose file and the Dockerfile are
 * checked statically: they parse, every build names a stage the Dockerfile has, every
 * dependency exists, and each service's environment is a configuration it accepts.
 */
const root = join(import.meta.dirname, "..");
type Service = {
  build?: { context: string; target: string };
  image?: string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: unknown;
};
const compose = parse(readFileSync(join(root, "docker-compose.yml"), "utf8"), { merge: true }) as {
  services: Record<string, Service>;
};
const stages = [
  ...readFileSync(join(root, "Dockerfile"), "utf8").matchAll(/^FROM\s+\S+\s+AS\s+(\S+)/gim),
].map((m) => m[1]);

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

describe("docker-compose.yml", () => {
  it("builds every service from a stage the Dockerfile has", () => {
    const built = Object.entries(compose.services).filter(([, s]) => s.build);
    expect(built.map(([name]) => name).sort()).toEqual(["api-gateway", "dispatcher", "migrate", "sender"]);
    for (const [name, service] of built) expect(stages, name).toContain(service.build!.target);
  });

  it("depends only on services it defines, waiting for health or completion", () => {
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(compose.services, `${name} → ${dep}`).toHaveProperty(dep);
        expect(["service_healthy", "service_completed_successfully"]).toContain(condition);
        if (condition === "service_healthy") expect(compose.services[dep]!.healthcheck, dep).toBeDefined();
      }
    }
  });

  const envOf = (service: string) =>
    Object.fromEntries(
      Object.entries(compose.services[service]!.environment ?? {}).map(([k, v]) => [
        k,
        interpolate(String(v)),
      ]),
    );

  it("gives the dispatcher and the senders environments their configurations accept", () => {
    expect(dispatcherConfig(envOf("dispatcher")).retrySchedule).toHaveLength(7);
    const sender = senderConfig(envOf("sender"));
    // Private destinations stay refused outside local development.
    expect(sender.allowPrivateDestinations).toBe(false);
    expect(envOf("sender").ENCRYPTION_KEY).toBe(envOf("api-gateway").ENCRYPTION_KEY);
  });

  it("gives the gateway an environment its configuration accepts", () => {
    const env = envOf("api-gateway");
    const config = loadConfig(env);
    expect(config.port).toBe(8080);
    expect(new URL(config.databaseUrl).hostname).toBe("postgres");
    expect(new URL(config.amqpUrl).hostname).toBe("rabbitmq");
  });

  it("sends every service's traces to the tracing backend it runs", () => {
    expect(compose.services.jaeger?.image).toMatch(/^jaegertracing\/all-in-one:/);
    for (const service of ["api-gateway", "dispatcher", "sender"]) {
      const env = envOf(service);
      expect(new URL(env.OTEL_EXPORTER_OTLP_ENDPOINT!).hostname, service).toBe("jaeger");
      expect(["http/protobuf", "http/json"]).toContain(env.OTEL_EXPORTER_OTLP_PROTOCOL);
    }
  });

  it("refuses to start without the secrets a user must choose", () => {
    delete supplied.ENCRYPTION_KEY;
    const raw = compose.services["api-gateway"]!.environment!.ENCRYPTION_KEY!;
    expect(() => interpolate(raw)).toThrow("ENCRYPTION_KEY");
  });
});
