import { describe, expect, it } from "vitest";
import type { TransformPool } from "./pool.ts";
import { AT, failure, input, sharedPool, withOneWorker } from "./poolTestSupport.ts";
import type { TransformationError } from "./sandbox.ts";

/** What a run may not do (compile code, overrun in one call), how long it may wait, and whose turn it is. */
const pool = sharedPool();

describe("what a run may not do, and whose turn it is", () => {
  it("compiles no code at run time and has no BigInt function, while functions stay functions", async () => {
    const source = `function handler(w) {
      const tried = (f) => { try { f(); return "ran"; } catch (e) { return e.name + ": " + e.message; } };
      w.payload = {
        eval: tried(() => eval("1 + 1")),
        fn: tried(() => Function("return 1")()),
        ctor: tried(() => (function () {}).constructor("return 1")()),
        generator: tried(() => Object.getPrototypeOf(function* () {}).constructor("yield 1")),
        bigint: typeof BigInt,
        literal: tried(() => (1n).constructor("5")),
        instance: (() => 1) instanceof Function,
      };
      return w;
    }`;
    const { body } = (await pool.run("ep_eval", source, input(), AT)) as { body: string };
    expect(JSON.parse(body)).toEqual({
      eval: "EvalError: eval is not available to transformations",
      fn: "EvalError: compiling code at run time (Function) is not available to transformations",
      ctor: "EvalError: compiling code at run time (Function) is not available to transformations",
      generator: "EvalError: compiling code at run time (Function) is not available to transformations",
      bigint: "undefined",
      literal: "EvalError: BigInt() is not available to transformations",
      instance: true,
    });
  });

  it("fails a run that finished past its budget in one built-in call, as one interrupted", async () => {
    // One JSON.stringify QuickJS does not interrupt, of about half a second here, far past a
    // 100 ms budget (which the compile, on a loaded machine, keeps within).
    const { Sandbox } = await import("./sandbox.ts");
    const sandbox = await Sandbox.create(
      `function handler(w) {
        const o = {};
        for (let i = 0; i < 100; i++) o["k" + i] = undefined;
        w.payload = JSON.stringify(Array(20000).fill(o)).length;
        return w;
      }`,
      { memoryBytes: 16 << 20, timeoutMs: 100 },
    );
    try {
      const started = Date.now();
      const err = (() => {
        try {
          sandbox.call(JSON.stringify(input()), AT);
        } catch (e) {
          return e as TransformationError;
        }
        return null;
      })();
      expect(Date.now() - started).toBeGreaterThan(100);
      expect(err?.cause).toBe("timeout");
      expect(err?.message).toContain("100 ms budget");
    } finally {
      sandbox.dispose();
    }
  });

  it("a run whose time ends while it waits for a worker is busy, not the code's failure", async () => {
    await withOneWorker({ queuePerOwner: 2 }, async (one) => {
      const loop = one.run("ep_loop", "function handler(w) { while (true) {} }", input(), AT).catch((e) => e);
      const waited = await failure(
        one.run("ep_waiting", "function handler(w) { return w; }", input(), AT, AbortSignal.timeout(50)),
      );
      expect(waited.cause).toBe("busy");
      expect(waited.message).toContain("was not run");
      expect(one.counts.expired_waiting).toBe(1);
      // More than queuePerOwner of one owner waiting: busy at once, the others still run.
      const runs = [1, 2, 3].map(() =>
        one.run("ep_many", "function handler(w) { return w; }", input(), AT).catch((e: unknown) => e),
      );
      expect(((await runs[2]) as TransformationError).cause).toBe("busy");
      expect(await runs[0]).toMatchObject({ cancel: false });
      expect(((await loop) as TransformationError).cause).toBe("timeout");
    });
  });

  it("bounds the runs waiting for one account's owners together, and for the whole pool", async () => {
    await withOneWorker({ queuePerOwner: 10, queuePerAccount: 2, queueTotal: 3 }, async (one) => {
      const quick = "function handler(w) { return w; }";
      const ask = (account: string, owner: string, source = quick) =>
        one
          .run({ account, owner }, source, input(), AT)
          .catch((e: unknown) => e) as Promise<TransformationError>;
      const loop = ask("acct_l", "loop", "function handler(w) { while (true) {} }");
      // Runs go to the workers once this turn of the event loop has asked for all it will.
      await new Promise((resolve) => setImmediate(resolve));
      const waiting = [ask("acct_a", "a1"), ask("acct_a", "a2")];
      expect((await ask("acct_a", "a3")).message).toMatch(
        /2 runs of this account's transformations are waiting/,
      );
      waiting.push(ask("acct_b", "b1"));
      const refused = await ask("acct_c", "c1");
      expect(refused).toMatchObject({ cause: "busy" });
      expect(refused.message).toMatch(
        /3 transformation runs are waiting for a worker already; it was not run/,
      );
      for (const w of await Promise.all(waiting)) expect(w).toMatchObject({ cancel: false });
      expect(await loop).toMatchObject({ cause: "timeout" });
    });
  });

  it("gives a worker several runs of one endpoint's quick code at once, each answered with its own result", async () => {
    await withOneWorker({}, async (one) => {
      const source = "function handler(w) { w.payload = w.event_id; return w; }";
      await one.run("ep_batch", source, input(), AT);
      const runs = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          one.run("ep_batch", source, input({ event_id: `evt_${i}` }), AT),
        ),
      );
      expect(runs.map((r) => ("body" in r ? r.body : null))).toEqual(
        Array.from({ length: 20 }, (_, i) => `evt_${i}`),
      );
      expect(one.counts.batched).toBeGreaterThan(0);
    });
  });

  it("ends a batch once it has taken its budget: the runs not started wait their turn again, and succeed", async () => {
    await withOneWorker({ timeoutMs: 600 }, async (one) => {
      // About 100 ms a run against a budget of 600 ms, so a batch of 23 is cut after about 6:
      // one of 23 is cut, and none runs out, even should the machine's load make a run up to 3.8
      // times shorter or 6 times longer than measured (27 to 600 ms).
      const source = `function handler(w) {
        let n = 0;
        for (let i = 0; i < w.payload.spin; i++) n += i;
        w.payload = w.event_id + ":" + (n > 0);
        return w;
      }`;
      const spin = await calibrate(one, source, 100);
      const runs = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          one.run("ep_long", source, input({ event_id: `evt_${i}`, payload: { spin } }), AT),
        ),
      );
      expect(runs.map((r) => ("body" in r ? r.body : null))).toEqual(
        Array.from({ length: 24 }, (_, i) => `evt_${i}:true`),
      );
      expect(one.counts.deferred).toBeGreaterThan(0);
      expect(one.counts.failures).toBe(0);
    });
  });

  it("ends a batch once its answers carry 4 MiB of bodies: the rest wait their turn again, and succeed", async () => {
    await withOneWorker({}, async (one) => {
      const source = "function handler(w) { w.payload = w.event_id + 'x'.repeat(1500000); return w; }";
      await one.run("ep_large", source, input(), AT);
      const runs = await Promise.all(
        Array.from({ length: 8 }, (_, i) => one.run("ep_large", source, input({ event_id: `evt_${i}` }), AT)),
      );
      expect(runs.map((r) => ("body" in r ? r.body.slice(0, 6) : null))).toEqual(
        Array.from({ length: 8 }, (_, i) => `evt_${i}x`),
      );
      expect(one.counts.deferred).toBeGreaterThan(0);
    });
  });

  it("stops waiting for a run its caller gave up on while it waited on a worker behind another", async () => {
    await withOneWorker({}, async (one) => {
      const source = `function handler(w) {
        let n = 0;
        for (let i = 0; i < w.payload.spin; i++) n += i;
        w.payload = String(n > 0);
        return w;
      }`;
      const spin = await calibrate(one, source, 100);
      const first = one.run("ep_long", source, input({ payload: { spin } }), AT);
      const caller = new AbortController();
      const second = one
        .run("ep_long", source, input({ payload: { spin } }), AT, caller.signal)
        .catch((e: unknown) => e as TransformationError);
      // Both on the one worker (the second behind the first, the same account's quick code).
      await new Promise((resolve) => setImmediate(resolve));
      caller.abort();
      let firstDone = false;
      void first.then(() => {
        firstDone = true;
      });
      expect(await second).toMatchObject({ cause: "busy" });
      expect(firstDone).toBe(false);
      expect(await first).toMatchObject({ body: "true" });
      // The worker's answer to the abandoned run, when it came, was dropped: the pool goes on.
      expect(await one.run("ep_long", source, input({ payload: { spin: 1 } }), AT)).toMatchObject({
        body: "false",
      });
    });
  });

  it("stops a batch at a run that overran: the rest run after it, on their own, and succeed", async () => {
    await withOneWorker({ timeoutMs: 200 }, async (one) => {
      const source =
        "function handler(w) { if (w.payload.data.loop) while (true) {} w.payload = 'ok'; return w; }";
      await one.run("ep_mixed", source, input(), AT);
      const busy = one.run("ep_hold", "function handler(w) { return w; }", input(), AT);
      const runs = [input(), input({ payload: { data: { loop: true } } }), input(), input()].map((i) =>
        one.run("ep_mixed", source, i, AT).catch((e: unknown) => e as TransformationError),
      );
      await busy;
      const results = await Promise.all(runs);
      expect((results[1] as TransformationError).cause).toBe("timeout");
      for (const i of [0, 2, 3]) expect(results[i]).toMatchObject({ body: "ok" });
    });
  });

  it("fails a top level that ran far past its budget in one built-in call", async () => {
    const err = await failure(
      pool.compile(
        "ep_top",
        `var o = {}; for (var i = 0; i < 100; i++) o["k" + i] = undefined;
         var text = JSON.stringify(Array(30000).fill(o));
         function handler(w) { return w; }`,
      ),
    );
    expect(err.cause).toBe("timeout");
    expect(err.message).toMatch(/top level ran past twice its 200 ms budget/);
  });

  it("an account's many endpoints share one account's workers, leaving the rest to another account", async () => {
    await pool.warm();
    const loop = "function handler(w) { while (true) {} }";
    // Four endpoints of one account, each looping: as four accounts they would take both workers.
    const loops = [1, 2, 3, 4].map((n) =>
      pool.run({ account: "acct_hostile", owner: `ep_h${n}` }, loop, input(), AT).catch((e: unknown) => e),
    );
    let loopsDone = 0;
    for (const l of loops) void l.then(() => loopsDone++);
    const neighbour = "function handler(w) { w.payload = 'ok'; return w; }";
    const runs = await Promise.all(
      Array.from({ length: 20 }, () =>
        pool.run({ account: "acct_neighbour", owner: "ep_n" }, neighbour, input(), AT),
      ),
    );
    expect(runs.every((r) => "body" in r && r.body === "ok")).toBe(true);
    expect(loopsDone).toBe(0);
    for (const result of await Promise.all(loops))
      expect((result as TransformationError).cause).toBe("timeout");
  });
});

/**
 * The loop count at which `source`, given `{ spin }`, takes about `ms` on this machine now:
 * two runs of owner `ep_long`, whose difference leaves out what a run costs besides its loop;
 * then one of a single loop, which leaves the owner known quick whatever the load made of those.
 */
async function calibrate(pool: TransformPool, source: string, ms: number): Promise<number> {
  const timed = async (spin: number) => {
    const started = performance.now();
    await pool.run("ep_long", source, input({ payload: { spin } }), AT);
    return performance.now() - started;
  };
  const probe = 400_000;
  const perLoop = Math.max(1e-6, ((await timed(2 * probe)) - (await timed(probe))) / probe);
  await timed(1);
  return Math.round(ms / perLoop);
}
