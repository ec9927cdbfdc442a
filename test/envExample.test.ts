import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
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
