/** The load generator's jobs that count answers only: events to the gateway, or POSTs to a URL. */
import { paddedJson } from "./http.ts";
import type { Run } from "./jobRun.ts";
import type { IngestJob, JobResult, PostJob } from "./protocol.ts";
import { loop, sendEvent } from "./senders.ts";

/** How long a job without deliveries waits for its last answers after the window. */
const FINISH_MS = 10_000;

export async function ingest(run: Run, job: IngestJob): Promise<JobResult> {
  const sending = loop(run, job.concurrency, async () => (await sendEvent(run, job.app, null)) !== null);
  await run.finish(sending, FINISH_MS, () => true);
  return { requests: run.requests.counts, deliveries: null };
}

export async function post(run: Run, job: PostJob): Promise<JobResult> {
  const url = new URL(job.url);
  const body = paddedJson(job.bodyBytes);
  const sending = loop(run, job.concurrency, async () => {
    try {
      const answer = await run.post(url, body);
      if (answer.status < 300) run.requests.ok(run.clock());
      else run.requests.fail(`${answer.status} ${answer.body}`);
      return answer.status < 300;
    } catch (err) {
      run.requests.fail(String(err));
      return false;
    }
  });
  await run.finish(sending, FINISH_MS, () => true);
  return { requests: run.requests.counts, deliveries: null };
}
