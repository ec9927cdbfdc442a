import { describe, expect, it } from "vitest";
import { TransformPool } from "./pool.ts";
import { AT, BUDGET_MS, failure, input, sharedPool } from "./poolTestSupport.ts";
import type { TransformationError } from "./sandbox.ts";

const pool = sharedPool();

describe("a transformation", () => {
  it("reshapes the payload, adds a header, and changes the method and URL", async () => {
    const source = `function handler(webhook) {
      webhook.payload = { text: webhook.eventType + " for " + webhook.payload.data.amount };
      webhook.headers["X-Extra"] = "yes";
      webhook.method = "put";
      webhook.url = webhook.url + "?via=herald";
      return webhook;
    }`;
    const request = await pool.run("ep_a", source, input(), AT);
    expect(request).toEqual({
      cancel: false,
      method: "PUT",
      url: "https://example.com/hook?via=herald",
      headers: { "x-tenant": "acme", "x-extra": "yes" },
      body: JSON.stringify({ text: "invoice.paid for 1200" }),
    });
  });

  it("sends a string payload as it is, and cancels when asked", async () => {
    const text = await pool.run(
      "ep_a",
      `function handler(w) { w.payload = "a=1&b=2"; return w; }`,
      input(),
      AT,
    );
    expect(text).toMatchObject({ cancel: false, body: "a=1&b=2" });
    const source = `function handler(w) { if (w.payload.data.amount < 5000) w.cancel = true; return w; }`;
    expect(await pool.run("ep_a", source, input(), AT)).toEqual({ cancel: true });
  });

  it("keeps Herald's own headers: the signature's and the framing's are not the transformation's to set", async () => {
    const source = `function handler(w) {
      w.headers["webhook-signature"] = "v1,forged"; w.headers["Content-Length"] = "1"; w.headers["Host"] = "evil";
      w.headers.te = "trailers"; w.headers.expect = "100-continue"; w.headers.upgrade = "h2c";
      return w;
    }`;
    const request = await pool.run("ep_a", source, input(), AT);
    expect(request).toMatchObject({ headers: { "x-tenant": "acme" } });
    expect(Object.keys((request as { headers: object }).headers)).toEqual(["x-tenant"]);
  });

  it("sees a fixed Date, and nothing of the host: no process, require, import, timers or network", async () => {
    const source = `function handler(w) {
      let imported = "no";
      try { import("fs").then(() => {}, () => {}); imported = "promise"; } catch (e) { imported = "threw"; }
      w.payload = {
        now: Date.now(), made: new Date().toISOString(), called: typeof Date(),
        parsed: new Date("2020-01-01T00:00:00Z").getTime(),
        globals: [typeof process, typeof require, typeof setTimeout, typeof setInterval, typeof fetch,
          typeof XMLHttpRequest, typeof WebAssembly, typeof std, typeof os, typeof globalThis.process,
          typeof ArrayBuffer, typeof SharedArrayBuffer, typeof Uint8Array, typeof DataView],
      };
      return w;
    }`;
    const request = await pool.run("ep_a", source, input(), AT);
    const body = JSON.parse((request as { body: string }).body);
    expect(body.now).toBe(AT);
    expect(body.made).toBe("2026-03-04T05:06:07.000Z");
    expect(body.called).toBe("string");
    expect(body.parsed).toBe(Date.parse("2020-01-01T00:00:00Z"));
    expect(body.globals).toEqual(Array(14).fill("undefined"));
  });

  it("fails to compile with a syntax error that names its line", async () => {
    const err = await failure(pool.compile("ep_a", "function handler(w) {\n  return w +;\n}"));
    expect(err.cause).toBe("syntax");
    expect(err.line).toBe(2);
    expect(err.message).toMatch(/^SyntaxError: .*\(line 2\)$/);
  });

  it("names the line a run threw at, and says when no handler is defined", async () => {
    const err = await failure(
      pool.run("ep_a", "function handler(w) {\n\n  return w.nope.deeper;\n}", input(), AT),
    );
    expect(err.cause).toBe("threw");
    expect(err.line).toBe(3);
    expect(err.message).toMatch(/^TypeError: .*\(line 3\)$/);
    const none = await failure(pool.run("ep_a", "var x = 1;", input(), AT));
    expect(none.message).toContain("defines no function handler(webhook)");
  });

  it.each([
    ["nothing", "function handler(w) { }", "returned nothing"],
    ["a number", "function handler(w) { return 42; }", "returned number"],
    ["GET", "function handler(w) { w.method = 'GET'; return w; }", "may be POST, PUT, PATCH"],
    ["another scheme", "function handler(w) { w.url = 'ftp://x/y'; return w; }", "ftp: URL"],
    [
      "a header across lines",
      "function handler(w) { w.headers.a = 'x\\r\\ny: z'; return w; }",
      "one-line string",
    ],
    ["no payload", "function handler(w) { delete w.payload; return w; }", "returned no `payload`"],
    [
      "a URL of over 2,048 characters as sent",
      "function handler(w) { w.url = w.url + '/' + '\u4e2d'.repeat(2000); return w; }",
      "characters as sent; 2048 at most",
    ],
    [
      "66 headers (the endpoint's one and 65 more)",
      "function handler(w) { for (let i = 0; i < 65; i++) w.headers['h' + i] = 'v'; return w; }",
      "returned 66 headers; 64 at most",
    ],
    [
      "a header HTTP cannot carry",
      "function handler(w) { w.headers.a = '\u0100'; return w; }",
      "characters HTTP does not carry",
    ],
  ])("that returns %s is invalid, and says why", async (_what, source, says) => {
    const err = await failure(pool.run("ep_a", source, input(), AT));
    expect(err.cause).toBe("invalid");
    expect(err.message).toContain(says);
  });
});

describe("hostile transformations", () => {
  it("an endless loop is stopped at its budget, and the next run of the same code starts afresh", async () => {
    const source =
      "var runs = 0;\nfunction handler(w) {\n  runs++;\n  if (w.payload.data.loop) while (true) {}\n  w.payload = runs; return w;\n}";
    const err = await failure(pool.run("ep_loop", source, input({ payload: { data: { loop: true } } }), AT));
    expect(err.cause).toBe("timeout");
    // QuickJS knows the function it stopped and a line in it at or before the loop: it says so.
    expect(err.message).toBe(
      `the transformation ran past its ${BUDGET_MS} ms budget inside \`handler\` (at line 4 or later in it)`,
    );
    expect(err.line).toBe(4);
    const nested = "function spin() {\n  for (;;) {}\n}\nfunction handler(w) {\n  spin();\n}";
    expect((await failure(pool.run("ep_spin", nested, input(), AT))).message).toBe(
      `the transformation ran past its ${BUDGET_MS} ms budget inside \`spin\`, called from line 5 (at line 1 or later in it)`,
    );
    // The sandbox was closed with its state: `runs` counts from zero again.
    expect(await pool.run("ep_loop", source, input(), AT)).toMatchObject({ body: "1" });
  });

  it.each([
    [
      "an array without end",
      "function handler(w) { const a = []; for (;;) a.push(new Array(10000).fill(w)); }",
    ],
    ["a string doubling", "function handler(w) { let s = 'x'; for (;;) s = s + s; }"],
    ["a recursion without end", "function handler(w) { return handler(w) + 1; }"],
  ])("%s fails its own run on memory or time, and the pool goes on", async (_what, source) => {
    const err = await failure(pool.run("ep_bomb", source, input(), AT));
    expect(["memory", "timeout"]).toContain(err.cause);
    expect(await pool.run("ep_ok", "function handler(w) { return w; }", input(), AT)).toMatchObject({
      cancel: false,
    });
  });

  it("a native call QuickJS cannot interrupt ends with its worker, which a new one replaces", async () => {
    // JSON.stringify of 300,000 objects of 100 undefined properties runs for about 9 s inside
    // QuickJS with no interrupt check (and writes 900 KB): far past the time its worker is given.
    const source = `function handler(w) {
      const o = {};
      for (let i = 0; i < 100; i++) o["k" + i] = undefined;
      w.payload = JSON.stringify(Array(300000).fill(o)).length;
      return w;
    }`;
    const replaced = pool.counts.workers_replaced;
    const err = await failure(pool.run("ep_native", source, input(), AT));
    expect(err.cause).toBe("timeout");
    expect(err.message).toContain(`${BUDGET_MS} ms budget`);
    expect(pool.counts.workers_replaced).toBe(replaced + 1);
    expect(await pool.run("ep_ok", "function handler(w) { return w; }", input(), AT)).toMatchObject({
      cancel: false,
    });
  });

  it("a run its worker answered in time succeeds, though this thread's event loop stalled past the budget", async () => {
    await pool.warm();
    const source = "function handler(w) { w.payload = 'ok'; return w; }";
    await pool.run("ep_stall", source, input(), AT);
    const replaced = pool.counts.workers_replaced;
    // Asked in the loop's check phase and the thread then busy: the next phase is the timers'.
    const run = await new Promise<Promise<unknown>>((resolve) =>
      setImmediate(() => {
        const asked = pool.run("ep_stall", source, input(), AT).catch((e: unknown) => e);
        const until = Date.now() + BUDGET_MS * 3 + 200;
        while (Date.now() < until) {}
        resolve(asked);
      }),
    );
    expect(await run).toMatchObject({ body: "ok" });
    expect(pool.counts.workers_replaced).toBe(replaced);
  });

  it("one endpoint's endless loops leave the other worker to another endpoint", async () => {
    // Workers replaced by the tests before are loaded first: the claim is about two at work.
    await pool.warm();
    const loop = "function handler(w) { while (true) {} }";
    const loops = [1, 2, 3, 4].map(() => pool.run("ep_hostile", loop, input(), AT).catch((e: unknown) => e));
    let loopsDone = 0;
    for (const l of loops) void l.then(() => loopsDone++);
    const neighbour = "function handler(w) { w.payload = 'ok'; return w; }";
    const runs = await Promise.all(
      Array.from({ length: 20 }, () => pool.run("ep_neighbour", neighbour, input(), AT)),
    );
    expect(runs.every((r) => "body" in r && r.body === "ok")).toBe(true);
    // The neighbour's twenty runs were all done before even the first loop had run out its
    // budget: the hostile endpoint held one worker, never both.
    expect(loopsDone).toBe(0);
    for (const result of await Promise.all(loops))
      expect((result as TransformationError).cause).toBe("timeout");
  });
});

describe("a worker's heap", () => {
  // Each keeps about 10 MB in a global, and counts its runs there.
  const hoarder = `var kept = null, runs = 0;
    function handler(w) { kept ??= "x".repeat(10 << 20); runs++; w.payload = runs; return w; }`;

  /** ep_1's third run, after three others kept 10 MB each, in one worker with this heap bound. */
  async function thirdRun(heapBytes: number): Promise<unknown> {
    const pool = new TransformPool({
      workers: 1,
      cached: 64,
      queuePerOwner: 10,
      memoryBytes: 16 << 20,
      timeoutMs: 2000,
      heapBytes,
    });
    try {
      await pool.run("ep_1", hoarder, input(), AT);
      await pool.run("ep_1", hoarder, input(), AT);
      for (const owner of ["ep_2", "ep_3", "ep_4"]) await pool.run(owner, hoarder, input(), AT);
      return ((await pool.run("ep_1", hoarder, input(), AT)) as { body: string }).body;
    } finally {
      await pool.close();
    }
  }

  it("closes the sandboxes used longest ago when it grows past its bound: they start afresh", async () => {
    expect(await thirdRun(32 << 20)).toBe("1");
  });

  it("keeps them, state and all, within it", async () => {
    expect(await thirdRun(256 << 20)).toBe("3");
  });

  it("stops one run that grows it past its bound in many small allocations, before its time, and replaces the worker", async () => {
    // Each allocation is far under the memory limit, which refuses one at a time: only the heap
    // says how much the run holds. Its budget is long, so only memory can stop it.
    const one = new TransformPool({
      workers: 1,
      cached: 8,
      queuePerOwner: 10,
      memoryBytes: 16 << 20,
      timeoutMs: 10_000,
      heapBytes: 48 << 20,
    });
    try {
      await one.warm();
      const grower =
        "function handler(w) {\n  const kept = [];\n  for (;;) kept.push('x'.repeat(1000) + kept.length);\n}";
      const err = await failure(one.run("ep_grow", grower, input(), AT));
      expect(err.cause).toBe("memory");
      expect(err.message).toMatch(
        /^the transformation grew its worker's memory past 48 MB, in many allocations, inside `handler`/,
      );
      expect(one.counts.workers_replaced).toBe(1);
      expect(await one.run("ep_ok", "function handler(w) { return w; }", input(), AT)).toMatchObject({
        cancel: false,
      });
    } finally {
      await one.close();
    }
  });
});
