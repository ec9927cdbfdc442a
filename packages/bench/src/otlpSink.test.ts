import { context, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { hopBreakdown } from "./hops.ts";
import { type OtlpSink, startOtlpSink } from "./otlpSink.ts";

/** The sink decodes what OpenTelemetry's own protobuf exporter sends, as the services send it. */
let sink: OtlpSink | null = null;
afterEach(async () => {
  await sink?.close();
  sink = null;
});

function exporterTo(url: string, service: string): BasicTracerProvider {
  return new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${url}/v1/traces` }))],
  });
}

describe("the benchmark's OTLP sink", () => {
  it("decodes protobuf exports into spans with their service, ids, names and times", async () => {
    sink = await startOtlpSink();
    sink.record(true);
    const provider = exporterTo(sink.url, "api-gateway");
    const tracer = provider.getTracer("test");
    const before = Date.now();
    const parent = tracer.startSpan("POST /v3/events");
    const child = tracer.startSpan("publish event.created.v1", {}, trace.setSpan(context.active(), parent));
    child.end();
    parent.end();
    await provider.forceFlush();
    await provider.shutdown();
    const { spans, bytes } = sink.take();
    expect(bytes, "the exports' size").toBeGreaterThan(0);
    expect(spans.map((s) => s.name).sort()).toEqual(["POST /v3/events", "publish event.created.v1"]);
    const p = spans.find((s) => s.name === "POST /v3/events")!;
    const c = spans.find((s) => s.name !== p.name)!;
    expect(p.service).toBe("api-gateway");
    expect(p.traceId).toBe(parent.spanContext().traceId);
    expect(p.spanId).toBe(parent.spanContext().spanId);
    expect(c.traceId).toBe(p.traceId);
    expect(c.parentSpanId).toBe(p.spanId);
    expect(p.startMs).toBeGreaterThanOrEqual(before - 1);
    expect(p.endMs).toBeGreaterThanOrEqual(p.startMs);
    expect(sink.take(), "take clears").toEqual({ spans: [], bytes: 0 });
  });

  it("keeps nothing exported while not recording", async () => {
    sink = await startOtlpSink();
    const provider = exporterTo(sink.url, "sender");
    const tracer = provider.getTracer("test");
    tracer.startSpan("before").end();
    await provider.forceFlush();
    sink.record(true);
    tracer.startSpan("while recording").end();
    await provider.forceFlush();
    await provider.shutdown();
    expect(sink.take().spans.map((s) => s.name)).toEqual(["while recording"]);
  });
});

describe("hopBreakdown", () => {
  const span = (service: string, name: string, startMs: number, endMs: number, traceId = "t1") => ({
    service,
    traceId,
    spanId: `${service}-${name}`,
    parentSpanId: "",
    name,
    startMs,
    endMs,
  });

  it("measures each hop between the spans of a delivery, and skips incomplete traces", () => {
    const spans = [
      span("api-gateway", "POST /v3/events", 1000, 1004),
      span("api-gateway", "publish event.created.v1", 1003, 1005),
      span("dispatcher", "process event.created.v1", 1006, 1012),
      span("dispatcher", "publish attempt.requested.v1", 1010, 1011),
      span("sender", "process attempt.requested.v1", 1013, 1020),
      span("sender", "POST", 1014, 1016.5),
      span("api-gateway", "POST /v3/events", 2000, 2004, "t2"),
    ];
    const h = hopBreakdown({ spans, bytes: 3000 });
    expect(h.traces).toBe(2);
    expect(h.bytesPerTrace).toBe(1500);
    expect(h.complete).toBe(1);
    expect(h.hops.map((x) => x.p50Ms)).toEqual([3, 2, 1, 4, 1, 2, 1, 2.5]);
    expect(h.total.p50Ms).toBe(16.5);
  });
});
