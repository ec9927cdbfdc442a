import { type AttemptCompletedV1, RESULTS_PER_MESSAGE } from "@herald/contracts";
import { context, startTelemetry, type Telemetry, trace, tracer } from "@herald/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testBroker } from "../../../test/support/broker.ts";
import { drainQueue } from "../../../test/support/isolation.ts";
import { resultReporter } from "./reports.ts";

/** The sender's reports against a real RabbitMQ: several results a message, each confirmed. */
// Spans with real ids and the W3C propagator, exporting nothing (no OTLP endpoint).
let telemetry: Telemetry;
beforeAll(() => {
  telemetry = startTelemetry("reports-test", {});
});
afterAll(() => telemetry.shutdown());
const broker = () => testBroker("reports-test");

const outcome = (n: number): AttemptCompletedV1 => ({
  attempt_id: `atmpt_${n}`,
  delivery_id: `dlv_${n}`,
  event_id: `evt_${n}`,
  endpoint_id: "ep_1",
  succeeded: true,
  response_status: 200,
  response_body: "ok",
  error: null,
  duration_ms: 1,
  retry_after_ms: null,
  trace_id: null,
  completed_at: new Date().toISOString(),
});

describe("the sender's result reports", () => {
  it("carry what finished together in one message, at most RESULTS_PER_MESSAGE, every result once", async () => {
    const b = await broker();
    const reporter = resultReporter(b, RESULTS_PER_MESSAGE);
    const n = 300;
    await Promise.all(Array.from({ length: n }, (_, i) => reporter.report(outcome(i))));
    const messages = await drainQueue(b.topology.queues.dispatcherResultBatches);
    // Only dispatchers that read them take them: nothing of this form in the single form's queue.
    expect(await drainQueue(b.topology.queues.dispatcherResults)).toEqual([]);
    const ids = messages.flatMap((m) =>
      (m.body as { results: AttemptCompletedV1[] }).results.map((r) => r.attempt_id),
    );
    expect(messages.every((m) => m.name === "attempts.completed.v1")).toBe(true);
    expect(ids.sort()).toEqual(Array.from({ length: n }, (_, i) => `atmpt_${i}`).sort());
    // Reported in one tick: full messages, not one per result.
    expect(messages.length).toBe(Math.ceil(n / RESULTS_PER_MESSAGE));
    expect(Math.max(...messages.map((m) => (m.body as { results: unknown[] }).results.length))).toBe(
      RESULTS_PER_MESSAGE,
    );
  });

  it("send a lone result at once, in its attempt's trace", async () => {
    const b = await broker();
    const reporter = resultReporter(b, RESULTS_PER_MESSAGE);
    const span = tracer().startSpan("attempt");
    const ctx = trace.setSpan(context.active(), span);
    await context.with(ctx, () => reporter.report(outcome(1)));
    span.end();
    const [message] = await drainQueue(b.topology.queues.dispatcherResultBatches);
    const [result] = (message!.body as { results: AttemptCompletedV1[] }).results;
    expect(result!.attempt_id).toBe("atmpt_1");
    // Its own publish span's, in the attempt's trace.
    const [, traceId, spanId] = result!.traceparent!.split("-");
    expect(traceId).toBe(span.spanContext().traceId);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spanId).not.toBe(span.spanContext().spanId);
  });

  it("fail each of their results when the broker does not confirm, for the request to be retried", async () => {
    const b = await broker();
    const reporter = resultReporter(b, RESULTS_PER_MESSAGE);
    await b.close();
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => reporter.report(outcome(i))));
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"]);
  });
});
