import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { type Dispatch, WorkerSlots } from "./worker.ts";

/**
 * A worker of a few lines: `echo` answers, `hang` never does, `exit` ends its thread with 3,
 * `throw` fails it with an uncaught error.
 */
const SCRIPT = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", ({ op, value }) => {
  if (op === "hang") for (;;) {}
  if (op === "exit") process.exit(3);
  if (op === "throw") throw new Error("thrown in the worker");
  parentPort.postMessage(value);
});
parentPort.postMessage("ready");
`;

type Job = { op: string; value?: string; settle: (outcome: string) => void };

/** Slots over the tiny worker, taking jobs in order, each with `limitMs`. */
function slots(workers: number, limitMs = 2000) {
  const waiting: Job[] = [];
  const counts = { started: 0, replaced: 0 };
  const made = new WorkerSlots<Job, string>(
    {
      workers,
      name: "test worker",
      start: () => {
        counts.started++;
        return new Worker(SCRIPT, { eval: true });
      },
    },
    {
      next: (): Dispatch<Job> | undefined => {
        const job = waiting.shift();
        if (!job) return undefined;
        return { job, request: { op: job.op, value: job.value }, limitMs, late: () => new Error("too late") };
      },
      answered: (_slot, job, reply) => job.settle(`answered ${reply}`),
      failed: (job, err) => job.settle(`failed: ${err.message}`),
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
  return { made, ask, counts };
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
    expect(counts).toEqual({ started: 2, replaced: 0 });
  });

  it.each([
    ["exits", "exit", "failed: test worker exited with 3"],
    ["throws", "throw", "failed: thrown in the worker"],
  ])("fail the job of a worker that %s, and replace it", async (_, op, outcome) => {
    const { made, ask, counts } = slots(1);
    await made.warm();
    expect(await ask(op)).toBe(outcome);
    expect(counts).toEqual({ started: 2, replaced: 1 });
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

  it("start and replace no worker once closed", async () => {
    const { made, counts } = slots(1);
    await made.close();
    made.start();
    expect(made.closed).toBe(true);
    expect(counts.started).toBe(0);
  });
});
