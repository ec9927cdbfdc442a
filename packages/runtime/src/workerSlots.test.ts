import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { type Dispatch, WorkerSlots } from "./worker.ts";

/**
 * A worker of a few lines: `echo` answers, `sleep` answers after `value` ms of work, `hang`
 * never does, `exit` ends its thread with 3, `throw` fails it with an uncaught error. Sent a
 * `replyPort` first, it answers there.
 */
const SCRIPT = `
const { parentPort } = require("node:worker_threads");
let replies = parentPort;
parentPort.on("message", (message) => {
  if (message.replyPort) return void (replies = message.replyPort);
  const { op, value } = message;
  if (op === "hang") for (;;) {}
  if (op === "exit") process.exit(3);
  if (op === "throw") throw new Error("thrown in the worker");
  if (op === "sleep") for (const until = Date.now() + Number(value); Date.now() < until; ) {}
  replies.postMessage(value);
});
parentPort.postMessage("ready");
`;

type Job = { op: string; value?: string; settle: (outcome: string) => void };

/**
 * Slots over the tiny worker, taking jobs in order, each with `limitMs`; `depth` and
 * `replyPort` as WorkerSlots takes them. A job given back (`returned`) waits first again.
 */
function slots(workers: number, limitMs = 2000, more: { depth?: number; replyPort?: boolean } = {}) {
  const waiting: Job[] = [];
  const counts = { started: 0, replaced: 0, returned: 0 };
  /** How many jobs each worker held when it was given one more. */
  const heldWhenGiven: number[] = [];
  const made = new WorkerSlots<Job, string>(
    {
      workers,
      name: "test worker",
      start: () => {
        counts.started++;
        return new Worker(SCRIPT, { eval: true });
      },
      ...more,
    },
    {
      next: (_slot, held): Dispatch<Job> | undefined => {
        const job = waiting.shift();
        if (!job) return undefined;
        heldWhenGiven.push(held.length);
        return { job, request: { op: job.op, value: job.value }, limitMs, late: () => new Error("too late") };
      },
      answered: (_slot, job, reply) => job.settle(`answered ${reply}`),
      failed: (job, err) => job.settle(`failed: ${err.message}`),
      returned: (job) => {
        counts.returned++;
        waiting.unshift(job);
      },
      replaced: () => counts.replaced++,
    },
  );
  const ask = (op: string, value?: string) =>
    new Promise<string>((settle) => {
      waiting.push({ op, value, settle });
      made.start();
      made.dispatch();
    });
  opened.push(made);
  return { made, ask, counts, heldWhenGiven };
}

const opened: WorkerSlots<Job, string>[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

describe("worker slots", () => {
  it("start their workers with the first job, and answer through the policy", async () => {
    const { ask, counts } = slots(2);
    expect(counts.started).toBe(0);
    expect(await Promise.all([ask("echo", "a"), ask("echo", "b")])).toEqual(["answered a", "answered b"]);
    expect(counts).toEqual({ started: 2, replaced: 0, returned: 0 });
  });

  it.each([
    ["exits", "exit", "failed: test worker exited with 3"],
    ["throws", "throw", "failed: thrown in the worker"],
  ])("fail the job of a worker that %s, and replace it", async (_, op, outcome) => {
    const { made, ask, counts } = slots(1);
    await made.warm();
    expect(await ask(op)).toBe(outcome);
    expect(counts).toEqual({ started: 2, replaced: 1, returned: 0 });
    expect(await ask("echo", "after")).toBe("answered after");
  });

  it("end a worker whose job goes past its time, failing the job with its late error", async () => {
    const { made, ask, counts } = slots(1, 100);
    await made.warm();
    expect(await ask("hang")).toBe("failed: too late");
    expect(counts.replaced).toBe(1);
    // The next job goes to the new worker, once it has loaded: its limit is its own.
    expect(await ask("echo", "next")).toBe("answered next");
    expect(counts.replaced).toBe(1);
  });

  it("keep an answer that came in time, though this thread's loop stalled past the limit", async () => {
    const { made, ask, counts } = slots(1, 100);
    await made.warm();
    // Asked in the loop's check phase, then the thread busy: the timers' phase comes first.
    const answer = await new Promise<Promise<string>>((resolve) =>
      setImmediate(() => {
        const asked = ask("echo", "in time");
        const until = Date.now() + 300;
        while (Date.now() < until) {}
        resolve(asked);
      }),
    );
    expect(await answer).toBe("answered in time");
    expect(counts.replaced).toBe(0);
  });

  it("give a worker jobs behind the one it runs, each timed from the answer before it", async () => {
    // Two jobs of 300 ms on one worker, each allowed 450: both in time, though not together.
    const { made, ask, counts, heldWhenGiven } = slots(1, 450, { depth: 2 });
    await made.warm();
    const answers = [ask("sleep", "300"), ask("sleep", "300")];
    expect(heldWhenGiven).toEqual([0, 1]);
    expect(await Promise.all(answers)).toEqual(["answered 300", "answered 300"]);
    expect(counts.replaced).toBe(0);
  });

  it("return the jobs behind one whose worker is ended, and give them to the new worker", async () => {
    const { made, ask, counts } = slots(1, 200, { depth: 3 });
    await made.warm();
    const answers = [ask("hang"), ask("echo", "a"), ask("echo", "b")];
    expect(await Promise.all(answers)).toEqual(["failed: too late", "answered a", "answered b"]);
    expect(counts).toMatchObject({ replaced: 1, returned: 2 });
  });

  it("read the answers on reply ports at once when collected, not when the loop comes round", async () => {
    const { made, ask } = slots(1, 2000, { replyPort: true });
    await made.warm();
    let answer = "";
    void ask("echo", "now").then((a) => {
      answer = a;
    });
    // This thread busy and its loop never reached: only collect() can read the answer.
    const until = Date.now() + 300;
    while (Date.now() < until) {}
    made.collect();
    await Promise.resolve();
    expect(answer).toBe("answered now");
  });

  it("retire a worker: what it answered is read, what it holds is returned, and none fails", async () => {
    const { made, ask, counts } = slots(1, 2000, { depth: 2, replyPort: true });
    await made.warm();
    const [slot] = made.slots;
    const first = ask("sleep", "100");
    const second = ask("sleep", "300");
    // The first answered (on the port, unread), the second under way: retired now.
    const until = Date.now() + 200;
    while (Date.now() < until) {}
    made.retire(slot!);
    expect(await first).toBe("answered 100");
    expect(await second).toBe("answered 300");
    expect(counts).toMatchObject({ replaced: 1, returned: 1 });
  });

  it("start and replace no worker once closed", async () => {
    const { made, counts } = slots(1);
    await made.close();
    made.start();
    expect(made.closed).toBe(true);
    expect(counts.started).toBe(0);
  });
});
