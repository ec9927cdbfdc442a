import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { root } from "../support/dockerfile.ts";
import { databaseUrl, RUN_ID } from "../support/env.ts";
import { createQueuePrefix } from "../support/isolation.ts";
import { removeLocalStart } from "../support/localStart.ts";
import { freePorts } from "../support/replicas.ts";

/**
 * `npm start` restarts a service that exits, but not one that refuses its configuration: no
 * restart would help, so it says which and stops the others, exiting non-zero. (The restart of
 * a service that dies is in localScaling.test.ts.)
 */
const dbName = `herald_t_${RUN_ID}_refused`;
const stateDir = mkdtempSync(join(tmpdir(), "herald-state-"));
const queues = createQueuePrefix();

afterAll(() => removeLocalStart(dbName, queues, stateDir), 60_000);

describe("npm start with a configuration a service refuses", () => {
  it("stops everything and exits non-zero, naming the setting, instead of restarting it", async () => {
    const health = await freePorts(2);
    const { NODE_OPTIONS: _no, ...inherited } = process.env;
    const npm = spawn("npm", ["start"], {
      cwd: root,
      env: {
        ...inherited,
        PORT: "99999",
        DISPATCHER_HEALTH_PORT: String(health),
        SENDER_HEALTH_PORT: String(health + 1),
        DATABASE_URL: databaseUrl(dbName),
        AMQP_PREFIX: queues.prefix,
        HERALD_STATE_DIR: stateDir,
        LOG_LEVEL: "warn",
        NO_COLOR: "1",
      },
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    npm.stdout!.on("data", (d) => (output += d));
    npm.stderr!.on("data", (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => npm.on("exit", (c) => resolve(c)));
    expect(code, output).not.toBe(0);
    expect(output).toMatch(/api-gateway refused its configuration/);
    expect(output).toMatch(/PORT/);
    expect(output).not.toMatch(/restarting it/);
    expect(output).not.toMatch(/Herald is running/);
  }, 120_000);
});
