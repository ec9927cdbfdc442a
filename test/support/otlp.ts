import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local OTLP/HTTP receiver: it takes what the services' real exporters send to /v1/traces
 * and keeps the spans (OTLP/JSON decoded; protobuf bodies only counted).
 */
export type ReceivedSpan = {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
};

export type OtlpReceiver = {
  url: string;
  spans: ReceivedSpan[];
  protobufBatches: number;
  close(): Promise<void>;
};

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type KeyValue = { key: string; value: AnyValue };

const value = (v: AnyValue) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ""));
const attributes = (list: KeyValue[] = []) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));
/** OTLP/JSON ids are hex; accept base64 too. */
const hex = (id: string | undefined) =>
  !id ? "" : /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: "", spans: [], protobufBatches: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.url === "/v1/traces" && String(req.headers["content-type"]).includes("json")) {
        const doc = JSON.parse(body.toString("utf8")) as {
          resourceSpans: {
            resource: { attributes: KeyValue[] };
            scopeSpans: {
              spans: (Omit<ReceivedSpan, "service" | "attributes"> & { attributes: KeyValue[] })[];
            }[];
          }[];
        };
        for (const rs of doc.resourceSpans ?? []) {
          const service = String(attributes(rs.resource.attributes)["service.name"]);
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              receiver.spans.push({
                service,
                traceId: hex(span.traceId),
                spanId: hex(span.spanId),
                parentSpanId: hex(span.parentSpanId),
                name: span.name,
                kind: span.kind,
                attributes: attributes(span.attributes),
              });
            }
          }
        }
      } else if (req.url === "/v1/traces" && body.length > 0) {
        receiver.protobufBatches++;
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise((resolve) => server.close(() => resolve()));
  return receiver;
}
