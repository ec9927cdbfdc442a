import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bystander, p99Of, type Sink, startBystander, startSink } from "../support/bystander.ts";
import { type Stack, startStack } from "../support/stack.ts";

/**
 * The API's documented maxima, driven by one account with requests the API accepts, alone and
 * together, while another account (the bystander) reads its app every 200 ms and sends an event
 * after each step. The services run as processes with the heap cap they have under `npm start`
 * and in their images. None may exit, and the bystander's reads and deliveries stay under a
 * second at the 99th percentile. Serial (vitest.serial.config.ts): with other tests beside it,
 * the bystander would measure them too.
 */
const ENDPOINTS_PER_APP = 100;
const HEADERS = 20;
const HEADER_VALUE = 4096;
/** A filter of 3,837 characters (FILTER_LIMITS.size is 4,096): 12 × $in of 100 empty objects. */
const WIDE_FILTER = {
  $or: Array.from({ length: 12 }, () => ({ data: { $in: Array.from({ length: 100 }, () => ({})) } })),
};
const POLL = { timeout: 120_000, interval: 250 };

/** An object of `keys` short keys: about 8 bytes a key as JSON. */
const manyKeys = (keys: number) =>
  Object.fromEntries(Array.from({ length: keys }, (_, i) => [i.toString(36), 0]));
/** Data of about `bytes` bytes as JSON, of the shape webhooks carry: rows of fields, some quoted text. */
const bulky = (bytes: number) => ({
  rows: Array.from({ length: Math.floor(bytes / 160) }, (_, i) => ({
    id: `row_${i}`,
    sku: `SKU-${String(i).padStart(8, "0")}`,
    title: "A line item with a title of some length",
    qty: i % 7,
    price: 1999 + i,
    tags: ["gift", "eu"],
    note: 'they said "ship it" twice',
  })),
});

let stack: Stack;
let sink: Sink;
let attacker: string;
let bystander: Bystander;

const as = (method: string, path: string, json?: unknown) => stack.request(attacker, method, path, json);

/** No process exited, and the bystander's reads and deliveries since the last check were under a second. */
function expectBystanderUnharmed(): void {
  expect(stack.exited()).toEqual([]);
  const { requestMs, deliveryMs, acceptedMs } = bystander.take();
  expect(requestMs.length).toBeGreaterThan(0);
  expect(deliveryMs.length).toBeGreaterThan(0);
  expect(p99Of(requestMs), `reads, ms: ${JSON.stringify(requestMs.map(Math.round))}`).toBeLessThan(1000);
  expect(
    p99Of(deliveryMs),
    `deliveries, ms: ${JSON.stringify(deliveryMs)}, of which until the 201: ${JSON.stringify(acceptedMs)}`,
  ).toBeLessThan(1000);
}

/** ENDPOINTS_PER_APP endpoints of `app` at `/<app>/<n>` of the sink, each with the most custom headers. */
async function widestApp(app: string, extra: Record<string, unknown> = {}): Promise<void> {
  const headers = Object.fromEntries(
    Array.from({ length: HEADERS }, (_, i) => [`X-Limit-${i}`, "v".repeat(HEADER_VALUE)]),
  );
  for (let i = 0; i < ENDPOINTS_PER_APP; i++)
    await expectCreated(
      as("POST", "/v3/endpoints", { app, url: `${sink.url}/${app}/${i}`, headers, ...extra }),
    );
}

async function expectCreated(res: Promise<{ status: number; body: unknown }>): Promise<string> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(201);
  return (r.body as { id: string }).id;
}

beforeAll(async () => {
  stack = await startStack();
  sink = await startSink();
  attacker = await stack.newAccount("Attacker");
  bystander = await startBystander(stack, sink);
}, 120_000);

afterAll(async () => {
  // A figure for the memory budget (docs/operations.md, "Limits"), not an assertion: heaps are
  // capped, and a process over its cap exits, which expectBystanderUnharmed asserts against.
  if (stack) console.log("limits suite: peak resident memory, MiB", stack.peakMemory());
  await bystander?.stop();
  await stack?.close();
  await sink?.close();
}, 60_000);

describe("limits, alone and together, beside a bystander", () => {
  it("a legal filter over an object of 105,000 keys: the dry run and the fan-out stay short", {
    timeout: 120_000,
  }, async () => {
    await expectCreated(as("POST", "/v3/apps", { uid: "filtered", name: "Filtered" }));
    await as("POST", "/v3/event-types", { name: "wide.object" });
    expect(JSON.stringify(WIDE_FILTER).length).toBe(3837);
    await expectCreated(
      as("POST", "/v3/endpoints", { app: "filtered", url: `${sink.url}/filtered`, filter: WIDE_FILTER }),
    );
    await bystander.step();
    const event = { app: "filtered", type: "wide.object", data: manyKeys(105_000) };
    expect(JSON.stringify(event).length).toBeLessThan(1024 * 1024);
    const dry = await as("POST", "/v3/events/dry-run", event);
    expect(dry.status).toBe(200);
    // No object of the event's equals {}: filtered out, or, past the budget, not applied.
    expect(["filter", "unchecked"]).toContain(dry.body.endpoints[0].reason);
    await bystander.step();
    await expectCreated(as("POST", "/v3/events", event));
    await bystander.step();
    await bystander.step();
    expectBystanderUnharmed();
  });

  it("the widest fan-out of the largest event, with the most custom headers: every delivery arrives", {
    timeout: 240_000,
  }, async () => {
    await expectCreated(as("POST", "/v3/apps", { uid: "wide", name: "Wide" }));
    await as("POST", "/v3/event-types", { name: "wide.event" });
    await widestApp("wide");
    const refused = await as("POST", "/v3/endpoints", { app: "wide", url: `${sink.url}/wide/over` });
    expect(refused.status).toBe(400);
    await bystander.step();
    const events = 3;
    for (let i = 0; i < events; i++) {
      await expectCreated(
        as("POST", "/v3/events", { app: "wide", type: "wide.event", data: bulky(990_000) }),
      );
      await bystander.step();
    }
    await expect.poll(() => sink.count("/wide/"), POLL).toBe(ENDPOINTS_PER_APP * events);
    expect(sink.largest()).toBeGreaterThan(1_000_000);
    await bystander.step();
    expectBystanderUnharmed();
  });

  it("every maximum at once: the largest schema, filters and headers on the widest fan-out, events and dry runs together", {
    timeout: 240_000,
  }, async () => {
    await expectCreated(as("POST", "/v3/apps", { uid: "all", name: "All" }));
    // The largest schema (65,536 bytes as JSON), which the largest events must pass.
    const properties: Record<string, unknown> = { rows: { type: "array", maxItems: 10_000 } };
    for (let i = 0; JSON.stringify({ type: "object", properties }).length < 65_400; i++)
      properties[`field_${i}`] = { type: "string", maxLength: 64, description: "d".repeat(900) };
    const schema = { type: "object", properties };
    expect(JSON.stringify(schema).length).toBeLessThanOrEqual(65_536);
    const type = await as("POST", "/v3/event-types", { name: "all.event", schema });
    expect(type.status, JSON.stringify(type.body).slice(0, 300)).toBe(201);
    await as("POST", "/v3/event-types", { name: "all.keys" });
    // The widest filter, with a clause that matches (it is applied, or past the budget not applied: delivered either way).
    const filter = { $or: [...WIDE_FILTER.$or.slice(0, 11), { type: "all.event" }] };
    await widestApp("all", { filter });
    await bystander.step();
    const events = 3;
    const event = { app: "all", type: "all.event", data: bulky(990_000) };
    const answers = await Promise.all([
      ...Array.from({ length: events }, () => as("POST", "/v3/events", event)),
      ...Array.from({ length: events }, () => as("POST", "/v3/events/dry-run", event)),
      as("POST", "/v3/events/dry-run", { app: "all", type: "all.keys", data: manyKeys(105_000) }),
      bystander.step(),
    ]);
    for (const a of answers.slice(0, events)) expect(a!.status).toBe(201);
    for (const a of answers.slice(events, -1)) expect(a!.status).toBe(200);
    await bystander.step();
    await expect.poll(() => sink.count("/all/"), POLL).toBe(ENDPOINTS_PER_APP * events);
    await bystander.step();
    expectBystanderUnharmed();
  });

  it("a page of the largest events: cut short by their size, and paged through whole", {
    timeout: 240_000,
  }, async () => {
    await expectCreated(as("POST", "/v3/apps", { uid: "paged", name: "Paged" }));
    await as("POST", "/v3/event-types", { name: "paged.event" });
    const sent = 12;
    const data = manyKeys(100_000);
    for (let i = 0; i < sent; i++) {
      await expectCreated(as("POST", "/v3/events", { app: "paged", type: "paged.event", data }));
      if (i % 4 === 0) await bystander.step();
    }
    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < sent; page++) {
      const res = await as("GET", `/v3/events?app=paged&limit=100${after ? `&starting_after=${after}` : ""}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeGreaterThan(0);
      // Never the whole hundred: two megabytes of payloads a page at most.
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      expect(Object.keys(res.body.data[0].data)).toHaveLength(100_000);
      seen.push(...res.body.data.map((e: { id: string }) => e.id));
      if (!res.body.has_more) break;
      after = seen.at(-1);
    }
    expect(new Set(seen).size).toBe(sent);
    await bystander.step();
    expectBystanderUnharmed();
  });
});
