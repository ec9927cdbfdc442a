import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { describe as describeError, OutageLog } from "./outage.ts";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  return { logger: pino(stream), lines };
}

describe("an outage's log", () => {
  it("is one line when it starts and one when it ends, whatever the retries between", () => {
    const { logger, lines } = capture();
    let now = 1_000;
    const outage = new OutageLog(logger, "database", () => now);
    outage.ok();
    expect(lines).toEqual([]);
    for (let i = 0; i < 50; i++) outage.failed(new Error("connect ECONNREFUSED 127.0.0.1:5432"));
    expect(outage.down).toBe(true);
    now = 9_500;
    outage.ok();
    outage.ok();
    expect(outage.down).toBe(false);
    expect(lines.map((l) => [l.msg, l.err ?? null, l.downMs ?? null, l.failures ?? null])).toEqual([
      ["database unavailable; retrying until it answers", "connect ECONNREFUSED 127.0.0.1:5432", null, null],
      ["database available again", null, 8_500, 50],
    ]);
  });

  it("counts each outage on its own", () => {
    const { logger, lines } = capture();
    const outage = new OutageLog(logger, "broker");
    outage.failed("gone");
    outage.ok();
    outage.failed("gone again");
    outage.failed("still");
    outage.ok();
    expect(lines.map((l) => [l.msg, l.failures ?? null])).toEqual([
      ["broker unavailable; retrying until it answers", null],
      ["broker available again", 1],
      ["broker unavailable; retrying until it answers", null],
      ["broker available again", 2],
    ]);
  });
});

describe("an outage's first error, as its line says it", () => {
  it("is one line: the cause at the end of a message with a code frame, the first of several, a code", () => {
    const prisma = new Error(
      "\nInvalid `prisma.app.findMany()` invocation:\n\n→ 148 await x(\nCan't reach database server at 127.0.0.1:5432",
    );
    expect(describeError(prisma)).toBe("Can't reach database server at 127.0.0.1:5432");
    const refused = new AggregateError(
      [Object.assign(new Error("connect ECONNREFUSED ::1:5432"), { code: "ECONNREFUSED" })],
      "",
    );
    expect(describeError(refused)).toBe("connect ECONNREFUSED ::1:5432");
    expect(describeError(Object.assign(new Error(""), { code: "ECONNRESET" }))).toBe("ECONNRESET");
    expect(describeError("gone")).toBe("gone");
  });
});
