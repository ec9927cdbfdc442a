import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";

/** scripts/lib/relay.mjs: how `npm start` shows its services' output. */
const relayModule: string = "../scripts/lib/relay.mjs";
const { pretty, relay } = (await import(relayModule)) as {
  pretty: (line: string) => string;
  relay: (stream: NodeJS.ReadableStream, tag: string, out: { write: (s: string) => void }) => void;
};

describe("npm start's output relay", () => {
  it("makes pino's lines readable and leaves others as they are", () => {
    const line = JSON.stringify({
      level: 30,
      time: "2026-11-24T21:03:56.980Z",
      service: "dispatcher",
      msg: "app deleted",
      app: "app_1",
      deliveries: 3,
    });
    expect(pretty(line)).toBe("21:03:56.980 info  app deleted app=app_1 deliveries=3");
    expect(pretty("plain text")).toBe("plain text");
    expect(pretty("42")).toBe("42");
  });

  it("writes whole lines once per chunk, however the chunks cut them", async () => {
    const input = new PassThrough();
    const writes: string[] = [];
    relay(input, "[sender]", { write: (s) => writes.push(s) });
    const ended = new Promise((resolve) => input.on("end", resolve));
    input.write('{"level":40,"time":"2026-11-24T10:00:00.000Z","msg":"one"}\nplain\n{"level":30,');
    input.write('"time":"2026-11-24T10:00:01.000Z","msg":"two"}\nlast without newline');
    input.end();
    await ended;
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([
      "[sender] 10:00:00.000 warn  one\n[sender] plain\n",
      "[sender] 10:00:01.000 info  two\n",
      "[sender] last without newline\n",
    ]);
  });
});
