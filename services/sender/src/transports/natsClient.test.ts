import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import type { NatsTarget } from "@herald/contracts/destinations";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNatsTransport } from "./nats.ts";
import { contexts, failure, kindOf, signer } from "./testSupport.ts";

/**
 * A destination that drops SYNs: a listener that never accepts (its process blocks its own
 * event loop), whose accept queue is filled first. A connection to it stays in SYN-SENT until
 * the kernel gives up, minutes later, unless the client destroys it.
 */
let blackhole: ChildProcess;
let port: number;
const fillers: Socket[] = [];

beforeAll(async () => {
  const script = `const s = require("node:net").createServer();
    s.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
      console.log(s.address().port);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120000);
    });`;
  blackhole = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(blackhole.stdout!, "data")) as [Buffer];
  port = Number(line.toString().trim());
  // Connections until one does not complete: the accept queue is full then, and the SYNs of
  // the next are dropped.
  for (;;) {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    fillers.push(socket);
    const connected = once(socket, "connect").then(() => true);
    if (!(await Promise.race([connected, new Promise((r) => setTimeout(() => r(false), 500))]))) break;
  }
});

afterAll(() => {
  for (const socket of fillers) socket.destroy();
  blackhole.kill("SIGKILL");
});

/** Connections to the blackhole in SYN-SENT (state 02 in /proc/net/tcp), from any process. */
function synSent(): number {
  const rows = readFileSync("/proc/net/tcp", "utf8").trim().split("\n").slice(1);
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return rows.filter((row) => {
    const [, , remote, state] = row.trim().split(/\s+/);
    return remote?.endsWith(`:${hex}`) && state === "02";
  }).length;
}

describe("the NATS transport against a destination that drops SYNs", () => {
  it("times out, and leaves no socket behind in SYN-SENT", async () => {
    const { signed } = signer();
    const context = contexts();
    const transport = createNatsTransport();
    const target: NatsTarget = { type: "nats", tls: false, host: "nats.test", port, subject: "s" };
    const before = synSent();
    try {
      const err = await failure(
        transport.send(target, signed({}), context({ signal: AbortSignal.timeout(300), timeoutMs: 300 })),
      );
      expect(kindOf(err)).toBe("timeout");
      // The dial was still under way when the attempt ended: its socket is destroyed at the
      // connect timeout, the attempt's.
      await expect.poll(synSent, { timeout: 2000 }).toBe(before);
    } finally {
      await transport.close();
    }
  });
});
