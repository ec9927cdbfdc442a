import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SchemaPool, type SchemaPoolOptions, SchemaQueueFull, SchemaTooCostly } from "./pool.ts";

/** The schema workers on their own: real worker threads running the real checker. */
const pools: SchemaPool[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function pool(options: Partial<SchemaPoolOptions> = {}, logger = pino({ level: "silent" })) {
  const made = new SchemaPool(
    {
      workers: 2,
      compileTimeoutMs: 1000,
      validateTimeoutMs: 500,
      heapMb: 64,
      cacheBytes: 8 * 1024 * 1024,
      queuePerAccount: 64,
      ...options,
    },
    logger,
  );
  pools.push(made);
  return made;
}

/**
 * Within every budget and quick to compile, yet slow on long data: each item is tried against
 * 900 branches before the last one matches, 20,000 items in about 2 s.
 */
const wide = {
  type: "array",
  items: {
    anyOf: [...Array.from({ length: 900 }, (_, i) => ({ type: "string", minLength: i })), { type: "number" }],
  },
};
const items = (count: number) => Array.from({ length: count }, () => 0);
const small = { type: "object", required: ["id"], properties: { id: { type: "string" } } };

describe("the schema workers", () => {
  it("check a backtracking pattern against a hostile string in linear time, and name what RE2 cannot run", async () => {
    const schemas = pool();
    const evil = { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } };
    const reply = await schemas.validate("acc_a", "evil:1", evil, { s: `${"a".repeat(100_000)}!` });
    expect(reply.violations).toEqual([{ path: "/s", message: 'must match pattern "^(a+)+$"' }]);
    expect((await schemas.validate("acc_a", "evil:1", evil, { s: "aaa" })).violations).toEqual([]);

    const lookahead = await schemas.check("acc_a", { type: "string", pattern: "^(?=a)a$" });
    expect(lookahead.problems[0]?.message).toMatch(/pattern "\^\(\?=a\)a\$" is not supported.*RE2/);
  });

  it("stop a check at its time limit, replace the worker, and go on with the next", async () => {
    // Limits with room for a loaded machine: the replacing worker compiles the schema again.
    const schemas = pool({ compileTimeoutMs: 4000, validateTimeoutMs: 1000 });
    const slow = schemas.validate("acc_a", "wide:1", wide, items(100_000));
    await expect(slow).rejects.toThrow(SchemaTooCostly);
    // Its worker compiled the schema first: the compile's time is added to the check's.
    await expect(slow).rejects.toThrow(/took longer than 5 s \(SCHEMA_VALIDATE_TIMEOUT\)/);
    // Short data of the same schema still checks, on the worker that replaced it.
    expect((await schemas.validate("acc_a", "wide:1", wide, items(3))).violations).toEqual([]);
    expect(schemas.counts).toMatchObject({ over_limit: 1, workers_replaced: 1 });
  });

  it("serve another account while one account's checks run to their limits", async () => {
    const schemas = pool();
    const finished: string[] = [];
    const flood = Array.from({ length: 4 }, (_, i) =>
      schemas.validate("acc_flood", `wide:${i}`, wide, items(20_000)).then(
        () => finished.push("flood"),
        () => finished.push("flood"),
      ),
    );
    // Asked after all four: answered before the flood's second check ends.
    const other = schemas.validate("acc_other", "small:1", small, { id: "x" }).then((r) => {
      finished.push("other");
      return r;
    });
    expect((await other).violations).toEqual([]);
    await Promise.all(flood);
    expect(finished.indexOf("other")).toBeLessThan(2);
  });

  it("refuse an account's requests past its queue, and no one else's", async () => {
    const schemas = pool({ workers: 1, queuePerAccount: 2 });
    await schemas.validate("acc_other", "small:1", small, { id: "x" });
    // One runs, two wait, the fourth is refused.
    const asked = Array.from({ length: 4 }, (_, i) =>
      schemas.validate("acc_flood", `wide:${i}`, wide, items(20_000)).catch((err) => err),
    );
    const other = schemas.validate("acc_other", "small:1", small, {});
    const outcomes = await Promise.all(asked);
    expect(outcomes.filter((o) => o instanceof SchemaQueueFull)).toHaveLength(1);
    expect((await other).violations).toEqual([{ path: "/id", message: "is required" }]);
  });

  it("count an account's portal sessions as the account: its share of workers, and a queue for them all", async () => {
    const schemas = pool({ workers: 3, queuePerAccount: 4 });
    const session = (n: number) => ({ account: "acc_flood", portalSession: `ps_${n}` });
    const finished: string[] = [];
    // Each of 8 sessions asks twice: one a session, and four between them all, may wait.
    // Each check the pool took, however it ended; a refusal ends at once and is not one.
    const ended = (outcome: unknown) => {
      if (!(outcome instanceof SchemaQueueFull)) finished.push("portal");
      return outcome;
    };
    const asked = Array.from({ length: 16 }, (_, i) =>
      schemas.validate(session(i % 8), `wide:${i}`, wide, items(20_000)).then(ended, ended),
    );
    const other = schemas.validate("acc_other", "small:1", small, { id: "x" });
    // The account's own API keeps a queue of its own, and takes turns with its customers'.
    const own = schemas.validate("acc_flood", "small:1", small, { id: "y" }).then((r) => {
      finished.push("own");
      return r;
    });
    expect((await other).violations).toEqual([]);
    expect((await own).violations).toEqual([]);
    const outcomes = await Promise.all(asked);
    // Four wait and, on workers already started, two run (all workers but one); the rest are refused.
    const taken = outcomes.filter((o) => !(o instanceof SchemaQueueFull)).length;
    expect(taken).toBeGreaterThanOrEqual(4);
    expect(taken).toBeLessThanOrEqual(6);
    expect(outcomes.filter((o) => o instanceof SchemaQueueFull)).toHaveLength(16 - taken);
    // Behind one portal check at most: its lane takes turns with theirs, not its place after them all.
    expect(finished.indexOf("own")).toBeLessThanOrEqual(1);
  });

  it("answer a schema that trips the checker with its problem, keeping the worker", async () => {
    const schemas = pool({ workers: 1 });
    expect((await schemas.validate("acc_a", "small:1", small, { id: "x" })).violations).toEqual([]);
    const { problems } = await schemas.check("acc_a", { $ref: "#/%E0" });
    expect(problems).toEqual([{ path: "/", message: expect.stringContaining('refers to "#/%E0"') }]);
    expect(schemas.counts.workers_replaced).toBe(0);
  });

  it("keep validators within their byte budget, compiling again what they dropped", async () => {
    // 64 KiB a validator and 40 bytes a schema byte: room for one of these, not two.
    const schemas = pool({ workers: 1, cacheBytes: 100_000 });
    const one = { ...small, description: "x".repeat(100) };
    const two = { ...small, description: "y".repeat(100) };
    for (let round = 0; round < 3; round++) {
      expect((await schemas.validate("acc_a", "one", one, {})).violations).toHaveLength(1);
      expect((await schemas.validate("acc_a", "two", two, { id: "b" })).violations).toHaveLength(0);
    }
  });

  it("answer the same schema's check again from memory", async () => {
    const schemas = pool();
    const first = await schemas.check("acc_a", small);
    expect(await schemas.check("acc_b", small)).toEqual(first);
    expect(schemas.counts).toMatchObject({ checks: 1, checks_cached: 1 });
  });

  it("log Ajv's warnings through pino, one structured line each check, never the console", async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const stderr = vi.spyOn(process.stderr, "write");
    const stdout = vi.spyOn(process.stdout, "write");
    const schemas = pool({}, pino(sink));
    const forged = `x\n{"level":60,"msg":"forged"}${"y".repeat(10_000)}`;
    const reply = await schemas.check("acc_a", { type: "string", format: forged });
    expect(reply.problems).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, account: "acc_a", msg: "schema compiler warnings" });
    const warnings = lines[0]?.warnings as string[];
    expect(warnings[0]).toContain('unknown format "x\n{"level":60');
    expect(warnings.every((w) => w.length <= 300)).toBe(true);
    for (const spy of [stderr, stdout])
      expect(spy.mock.calls.some(([text]) => String(text).includes("unknown format"))).toBe(false);
  });

  it("give a validation that must compile its schema first the compile's time too", async () => {
    // 10 ms checks: a first compile on a fresh worker takes longer than that alone.
    const schemas = pool({ validateTimeoutMs: 10, compileTimeoutMs: 5000 });
    const reply = await schemas.validate("acc_a", "small:cold", small, { id: "x" });
    expect(reply.violations).toEqual([]);
  });

  it("list at most 50 of a schema's problems, counting the rest", async () => {
    const schemas = pool();
    const bad = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 200 }, (_, n) => [`p${n}`, { type: 0 }])),
    };
    const { problems } = await schemas.check("acc_a", bad);
    expect(problems).toHaveLength(51);
    expect(problems.at(-1)).toEqual({ path: "/", message: "and 150 more problems" });
  });
});
