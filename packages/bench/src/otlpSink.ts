import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Field, fields, hex, integer, text } from "./protobuf.ts";

/**
 * The trace backend of the as-deployed profile: an OTLP/HTTP receiver for `/v1/traces` in
 * protobuf (what the services export as deployed). It answers every export at once, as a
 * collector would, and decodes the spans only while `record` is on, keeping what the hop
 * breakdown needs.
 */
export type SinkSpan = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** Unix time in milliseconds, to the microsecond. */
  startMs: number;
  endMs: number;
};

/** What the services exported while the sink recorded. */
export type Recorded = { spans: SinkSpan[]; bytes: number };

export type OtlpSink = {
  url: string;
  record: (on: boolean) => void;
  /** The spans decoded while recording, and the bytes of the exports they came in; clears both. */
  take: () => Recorded;
  close: () => Promise<void>;
};

const nanosToMs = (ns: bigint) => Number(ns / 1000n) / 1000;

/** The fields of an embedded message. */
const children = (f: Field): Field[] => (f.wire === 2 ? [...fields(f.value)] : []);
const sub = (f: Field, no: number): Field[] => children(f).filter((x) => x.no === no);

function serviceName(resource: Field | undefined): string {
  for (const kv of resource ? sub(resource, 1) : []) {
    const parts = children(kv);
    const key = parts.find((p) => p.no === 1);
    const value = parts.find((p) => p.no === 2);
    if (key && text(key) === "service.name" && value) {
      const str = sub(value, 1)[0];
      if (str) return text(str);
    }
  }
  return "unknown";
}

/** The spans of an `ExportTraceServiceRequest`. */
export function decodeTraces(body: Uint8Array): SinkSpan[] {
  const spans: SinkSpan[] = [];
  for (const resourceSpans of fields(body)) {
    if (resourceSpans.no !== 1) continue;
    const service = serviceName(sub(resourceSpans, 1)[0]);
    for (const scopeSpans of sub(resourceSpans, 2)) {
      for (const span of sub(scopeSpans, 2)) {
        const s: SinkSpan = {
          service,
          traceId: "",
          spanId: "",
          parentSpanId: "",
          name: "",
          startMs: 0,
          endMs: 0,
        };
        for (const f of children(span)) {
          if (f.no === 1) s.traceId = hex(f);
          else if (f.no === 2) s.spanId = hex(f);
          else if (f.no === 4) s.parentSpanId = hex(f);
          else if (f.no === 5) s.name = text(f);
          else if (f.no === 7) s.startMs = nanosToMs(integer(f));
          else if (f.no === 8) s.endMs = nanosToMs(integer(f));
        }
        spans.push(s);
      }
    }
  }
  return spans;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let recording = false;
  let kept: Recorded = { spans: [], bytes: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (recording && req.url === "/v1/traces") {
        kept.bytes += body.length;
        try {
          kept.spans.push(...decodeTraces(body));
        } catch {
          // A body it cannot read is not the benchmark's failure; those spans are missing from the breakdown.
        }
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    record(on) {
      recording = on;
    },
    take() {
      const recorded = kept;
      kept = { spans: [], bytes: 0 };
      return recorded;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
