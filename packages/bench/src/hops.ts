import type { Recorded, SinkSpan } from "./otlpSink.ts";
import { round, summarize } from "./stats.ts";

/**
 * Where an event's time goes, from the spans of its trace: each hop is the time between two
 * points the spans mark, from the gateway's request to the sender's webhook call. OpenTelemetry's
 * Node SDK takes a span's start from Date.now() (whole milliseconds) and its end from the
 * monotonic clock, so a hop between two starts is good to about a millisecond.
 */
export type Hop = { name: string; p50Ms: number; p95Ms: number; p99Ms: number };
export type HopBreakdown = {
  /** Traces with every span a delivery makes, out of the traces seen. */
  complete: number;
  traces: number;
  hops: Hop[];
  /** Request start → webhook call end, the sum of the hops. */
  total: Hop;
  /** OTLP protobuf the services exported per trace: what tracing every event sends a collector. */
  bytesPerTrace: number;
};

type Marks = {
  request: SinkSpan;
  publishEvent: SinkSpan;
  fanOut: SinkSpan;
  publishAttempt: SinkSpan;
  attempt: SinkSpan;
  call: SinkSpan;
};

/** The hops in order, each as [name, from, to] in the trace's span times. */
const HOPS: [string, (m: Marks) => number, (m: Marks) => number][] = [
  ["gateway: request → event committed", (m) => m.request.startMs, (m) => m.publishEvent.startMs],
  ["gateway: event publish (broker confirm)", (m) => m.publishEvent.startMs, (m) => m.publishEvent.endMs],
  ["broker → dispatcher", (m) => m.publishEvent.endMs, (m) => m.fanOut.startMs],
  ["dispatcher: fan-out (match, attempt rows)", (m) => m.fanOut.startMs, (m) => m.publishAttempt.startMs],
  ["dispatcher: attempt publish (confirm)", (m) => m.publishAttempt.startMs, (m) => m.publishAttempt.endMs],
  ["broker → sender", (m) => m.publishAttempt.endMs, (m) => m.attempt.startMs],
  ["sender: before the call (sign, headers)", (m) => m.attempt.startMs, (m) => m.call.startMs],
  ["sender: webhook HTTP call", (m) => m.call.startMs, (m) => m.call.endMs],
];

function marksOf(spans: SinkSpan[]): Marks | null {
  const find = (service: string, test: (name: string) => boolean) =>
    spans.find((s) => s.service === service && test(s.name));
  const request = find("api-gateway", (n) => n.startsWith("POST /v3/events"));
  const publishEvent = find("api-gateway", (n) => n.startsWith("publish event.created"));
  const fanOut = find("dispatcher", (n) => n.startsWith("process event.created"));
  const publishAttempt = find("dispatcher", (n) => n.startsWith("publish attempt.requested"));
  const attempt = find("sender", (n) => n.startsWith("process attempt.requested"));
  const call = find("sender", (n) => n === "POST");
  return request && publishEvent && fanOut && publishAttempt && attempt && call
    ? { request, publishEvent, fanOut, publishAttempt, attempt, call }
    : null;
}

function hop(name: string, values: number[]): Hop {
  const s = summarize(values);
  return { name, p50Ms: round(s.p50, 2), p95Ms: round(s.p95, 2), p99Ms: round(s.p99, 2) };
}

export function hopBreakdown({ spans, bytes }: Recorded): HopBreakdown {
  const traces = new Map<string, SinkSpan[]>();
  for (const s of spans) {
    const list = traces.get(s.traceId);
    if (list) list.push(s);
    else traces.set(s.traceId, [s]);
  }
  const marks = [...traces.values()].map(marksOf).filter((m): m is Marks => m !== null);
  return {
    complete: marks.length,
    traces: traces.size,
    hops: HOPS.map(([name, from, to]) =>
      hop(
        name,
        marks.map((m) => Math.max(0, to(m) - from(m))),
      ),
    ),
    total: hop(
      "request start → webhook call end",
      marks.map((m) => m.call.endMs - m.request.startMs),
    ),
    bytesPerTrace: traces.size ? Math.round(bytes / traces.size) : 0,
  };
}

export function hopLines(h: HopBreakdown): string[] {
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const widest = Math.max(...[...h.hops, h.total].map((x) => x.name.length));
  const row = (x: Hop) =>
    `  ${x.name.padEnd(widest)}  ${[x.p50Ms, x.p95Ms, x.p99Ms].map((v) => ms(v).padStart(9)).join("  ")}`;
  return [
    `\nWhere the time goes at the first rate, from ${h.complete} complete traces of ${h.traces} (span clocks: ±1 ms)`,
    `  ${"".padEnd(widest)}  ${["p50", "p95", "p99"].map((p) => p.padStart(9)).join("  ")}`,
    ...h.hops.map(row),
    row(h.total),
    `  Traces exported: ${h.bytesPerTrace.toLocaleString("en-US")} bytes of OTLP protobuf per event (all its spans)`,
  ];
}
