import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Stack } from "./stack.ts";

/**
 * A receiver for many large deliveries: it answers 200 at once and keeps only what arrived
 * where (path, `webhook-id`, size, time), never the bodies.
 */
export type Sink = {
  url: string;
  /** Requests to paths starting with `prefix`. */
  count(prefix: string): number;
  /** When the request with this `webhook-id` arrived (ms since the epoch), if it did. */
  arrivedAt(webhookId: string): number | undefined;
  /** The largest body received, in bytes. */
  largest(): number;
  close(): Promise<void>;
};

export async function startSink(): Promise<Sink> {
  const arrivals: { path: string; id: string; at: number }[] = [];
  const byId = new Map<string, number>();
  let largest = 0;
  // Endpoints may have 20 custom headers of 4 KiB.
  const server = createServer({ maxHeaderSize: 1024 * 1024 }, (req, res) => {
    let size = 0;
    req.on("data", (c: Buffer) => (size += c.length));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "");
      const at = Date.now();
      arrivals.push({ path: (req.url ?? "/").split("?")[0]!, id, at });
      if (!byId.has(id)) byId.set(id, at);
      largest = Math.max(largest, size);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (prefix) => arrivals.filter((a) => a.path.startsWith(prefix)).length,
    arrivedAt: (id) => byId.get(id),
    largest: () => largest,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Another account, going about its business while a test drives an attacker's: it reads its
 * app every 200 ms, and on each `step` sends one event and waits for it at the sink (up to 20 s).
 * What it measured: each read's time, each event's time from the send to its arrival
 * (Infinity for a read that failed or an event that did not come).
 */
/** `acceptedMs`: of each event's delivery time, the part until its 201, for a failure to tell where. */
export type Measured = { requestMs: number[]; deliveryMs: number[]; acceptedMs: number[] };
export type Bystander = {
  step(): Promise<void>;
  /** What was measured since the last call (or the start). */
  take(): Measured;
  stop(): Promise<Measured>;
};

export async function startBystander(stack: Stack, sink: Sink): Promise<Bystander> {
  const key = await stack.newAccount("Bystander");
  const app = await stack.request(key, "POST", "/v3/apps", { uid: "bystander", name: "Bystander" });
  await stack.request(key, "POST", "/v3/event-types", { name: "bystander.ping" });
  const ep = await stack.request(key, "POST", "/v3/endpoints", {
    app: "bystander",
    url: `${sink.url}/bystander`,
  });
  if (app.status !== 201 || ep.status !== 201) throw new Error("the bystander could not set up");
  let requestMs: number[] = [];
  let deliveryMs: number[] = [];
  let acceptedMs: number[] = [];
  let stopped = false;
  const reading = (async () => {
    while (!stopped) {
      const started = performance.now();
      const ok = await stack.request(key, "GET", `/v3/apps/${app.body.id}`).then(
        (r) => r.status === 200,
        () => false,
      );
      requestMs.push(ok ? performance.now() - started : Number.POSITIVE_INFINITY);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    async step() {
      const started = Date.now();
      const sent = await stack
        .request(key, "POST", "/v3/events", {
          app: "bystander",
          type: "bystander.ping",
          data: { at: started },
        })
        .catch(() => null);
      if (sent?.status !== 201) {
        deliveryMs.push(Number.POSITIVE_INFINITY);
        acceptedMs.push(Number.POSITIVE_INFINITY);
        return;
      }
      acceptedMs.push(Date.now() - started);
      while (Date.now() - started < 20_000) {
        const at = sink.arrivedAt(sent.body.id);
        if (at !== undefined) {
          deliveryMs.push(at - started);
          return;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      deliveryMs.push(Number.POSITIVE_INFINITY);
    },
    take() {
      const measured = { requestMs, deliveryMs, acceptedMs };
      requestMs = [];
      deliveryMs = [];
      acceptedMs = [];
      return measured;
    },
    async stop() {
      stopped = true;
      await reading;
      return { requestMs, deliveryMs, acceptedMs };
    },
  };
}

/** The 99th percentile (nearest rank) of `values`. */
export function p99Of(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}
