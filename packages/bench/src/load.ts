/**
 * The load generator, forked by main so its work does not share an event loop with the
 * orchestration: the local receivers (receivers.ts), the senders that POST events to the gateway
 * (senders.ts: closed and open loop), the jobs made of them (requestJobs.ts, deliveryJobs.ts:
 * two closed loops side by side, a noisy neighbour beside an open loop), and the bookkeeping of
 * what was accepted, what arrived and when (jobRun.ts, tracker.ts). Main sends jobs over IPC (see
 * protocol.ts); each job answers with its counts.
 */
import { closedLoop, neighbour, openLoop, sideBySide } from "./deliveryJobs.ts";
import { send, startRun } from "./jobRun.ts";
import type { Job, JobResult, ToLoad } from "./protocol.ts";
import { receivers } from "./receivers.ts";
import { ingest, post } from "./requestJobs.ts";
import { setGateway } from "./senders.ts";

async function runJob(id: number, job: Job): Promise<JobResult> {
  const run = startRun(id, job);
  try {
    switch (job.kind) {
      case "ingest":
        return await ingest(run, job);
      case "post":
        return await post(run, job);
      case "closed-loop":
        return await closedLoop(run, job);
      case "side-by-side":
        return await sideBySide(run, job);
      case "open-loop":
      case "soak":
        return await openLoop(run, job);
      case "neighbour":
        return await neighbour(run, job);
    }
  } finally {
    run.stop();
  }
}

process.on("message", (raw) => {
  const message = raw as ToLoad;
  if (message.type === "init") setGateway(message.gateway);
  else
    runJob(message.id, message.job).then(
      (result) => send({ type: "done", id: message.id, result }),
      (err: unknown) => send({ type: "failed", id: message.id, message: String(err) }),
    );
});
// Main went away: nothing left to do.
process.on("disconnect", () => process.exit(0));

receivers.listen(0, "127.0.0.1", () => {
  const address = receivers.address();
  send({ type: "ready", receiverPort: typeof address === "object" && address ? address.port : 0 });
});
