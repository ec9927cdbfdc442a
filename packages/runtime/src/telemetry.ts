import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { NodeSDK } from "@opentelemetry/sdk-node";

/**
 * OpenTelemetry, configured only by the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json, OTEL_SERVICE_NAME,
 * OTEL_TRACES_SAMPLER, …). Spans are made by hand at the points an engineer searches: the
 * gateway request, each publish and consume, the fan-out, each attempt and its outgoing
 * call. With no endpoint set, spans still carry trace ids (logs and attempts are correlated)
 * but nothing is exported. Cloud resource detectors stay off: they call metadata addresses.
 */
export type Telemetry = { shutdown(): Promise<void> };

export function exportsTraces(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return (
    Boolean(endpoint) && (env.OTEL_TRACES_EXPORTER ?? "otlp") !== "none" && env.OTEL_SDK_DISABLED !== "true"
  );
}

/** A processor that keeps nothing: spans get ids and context, and cost no export. */
const keepNothing = {
  onStart() {},
  onEnd() {},
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

export function startTelemetry(service: string, env: NodeJS.ProcessEnv = process.env): Telemetry {
  env.OTEL_SERVICE_NAME ??= service;
  env.OTEL_NODE_RESOURCE_DETECTORS ??= "env,host,os,process";
  env.OTEL_METRICS_EXPORTER ??= "none";
  env.OTEL_LOGS_EXPORTER ??= "none";
  const exporting = exportsTraces(env);
  const sdk = new NodeSDK({ instrumentations: [], ...(exporting ? {} : { spanProcessors: [keepNothing] }) });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

export const tracer = () => trace.getTracer("herald");

/** W3C trace context headers (`traceparent`, `tracestate`) of `ctx`, for a message or a row. */
export function traceHeaders(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

export function contextFrom(headers: Record<string, unknown> | null | undefined): Context {
  const carrier: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (typeof v === "string") carrier[k] = v;
    else if (Buffer.isBuffer(v)) carrier[k] = v.toString("utf8");
  }
  return propagation.extract(context.active(), carrier);
}

export function traceIdOf(ctx: Context = context.active()): string | null {
  const spanContext = trace.getSpanContext(ctx);
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : null;
}

export type SpanOptions = { kind?: SpanKind; parent?: Context; attributes?: Attributes; links?: Link[] };

/** Runs `fn` inside a new span (child of `parent`, or of the active span), ending it after. */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/** Adds attributes to the active span, if any. */
export function annotate(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}

export { type Context, context, type Span, SpanKind, SpanStatusCode, trace };
