import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import type { FromLoad, Gateway, Job, JobResult, Phase, SoakSamples, Totals } from "./protocol.ts";

export type OnProgress = (phase: Phase, secondsLeft: number) => void;

/** What else main may follow of a job: its window's edges, and each second's totals (and a soak's samples). */
export type JobHooks = {
  onWindow?: (edge: "start" | "end") => void;
  onTick?: (tick: { atMs: number; phase: Phase; totals: Totals; samples?: SoakSamples }) => void;
};

/** Main's handle on the forked load generator (load.ts). */
export type LoadGenerator = {
  receiverPort: number;
  pid: number;
  init(gateway: Gateway): void;
  run(job: Job, onProgress: OnProgress, hooks?: JobHooks): Promise<JobResult>;
  kill(): void;
};

export async function forkLoadGenerator(): Promise<LoadGenerator> {
  const child: ChildProcess = fork(join(import.meta.dirname, "load.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // Its own process group: Ctrl-C reaches main, which ends it.
    detached: true,
  });
  const waiting = new Map<
    number,
    { resolve: (r: JobResult) => void; reject: (e: Error) => void; onProgress: OnProgress; hooks: JobHooks }
  >();
  let exited = false;
  const receiverPort = await new Promise<number>((resolve, reject) => {
    child.on("message", (raw) => {
      const message = raw as FromLoad;
      if (message.type === "ready") return resolve(message.receiverPort);
      const job = waiting.get(message.id);
      if (!job) return;
      if (message.type === "progress") {
        job.onProgress(message.phase, message.secondsLeft);
        if (message.totals)
          job.hooks.onTick?.({
            atMs: message.atMs,
            phase: message.phase,
            totals: message.totals,
            ...(message.samples ? { samples: message.samples } : {}),
          });
      } else if (message.type === "window") job.hooks.onWindow?.(message.edge);
      else {
        waiting.delete(message.id);
        if (message.type === "done") job.resolve(message.result);
        else job.reject(new Error(`load generator: ${message.message}`));
      }
    });
    child.on("exit", (code, signal) => {
      exited = true;
      const err = new Error(`the load generator exited (${signal ?? code})`);
      reject(err);
      for (const job of waiting.values()) job.reject(err);
      waiting.clear();
    });
  });
  let nextId = 1;
  return {
    receiverPort,
    pid: child.pid ?? 0,
    init: (gateway) => child.send({ type: "init", gateway }),
    run(job, onProgress, hooks = {}) {
      if (exited) return Promise.reject(new Error("the load generator is gone"));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject, onProgress, hooks });
        child.send({ type: "run", id, job });
      });
    },
    kill: () => {
      if (!exited) child.kill("SIGKILL");
    },
  };
}
