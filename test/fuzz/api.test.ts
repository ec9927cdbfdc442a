import { monitorEventLoopDelay } from "node:perf_hooks";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FuzzRequest, holdsFreeForm, type Operation, requestFor } from "../support/fuzz.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { BODY_LIMIT_BYTES } from "../support/largest.ts";
import { openapi } from "../support/openapi.ts";

/**
 * The whole API, fuzzed from its OpenAPI document against a real gateway, PostgreSQL and
 * RabbitMQ: every operation, with requests well-formed and hostile. Each answer must be below
 * 500, in the error format (with `param` for a parameter at fault) or matching the document,
 * and no request may hold the gateway's event loop (it runs in this process) past a bound. Then
 * the same at the largest legal values: every string at its `maxLength`, bodies filled to the
 * body limit (or just over it: a 413), filters and schemas at their own limits.
 *
 * Seeded and bounded, so `npm test` runs the same cases each time. A longer run:
 *   FUZZ_RUNS=20000 FUZZ_LARGEST_RUNS=2000 FUZZ_SEED=7 npm test -- test/fuzz/api.test.ts
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
/** Requests at the largest values: up to a megabyte each, so fewer. */
const LARGEST_RUNS = Number(process.env.FUZZ_LARGEST_RUNS ?? 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
/** The longest the event loop may be held by one request. */
const LOOP_BOUND_MS = 1500;

let gw: TestGateway;
const known: Record<string, string[]> = {};
/** Path values for DELETE and archive, by operation path: the ones in `known` must outlive the run. */
const doomed: Record<string, Record<string, string[]>> = {};
const loop = monitorEventLoopDelay({ resolution: 10 });

beforeAll(async () => {
  gw = await startGateway();
  const app = await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  const schema = { type: "object", properties: { id: { type: "string", pattern: "^[a-z]+$" } } };
  await gw.request("POST", "/v3/event-types", { json: { name: "order.paid", schema } });
  const endpoint = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: "https://example.com/fuzz", headers: { "X-Tenant": "acme" } },
  });
  const event = await gw.request("POST", "/v3/events", {
    json: { app: "acme", type: "order.paid", data: { id: "abc" } },
  });
  const replay = await gw.request("POST", `/v3/endpoints/${endpoint.body.id}/replay`, { json: {} });
  // What deletes and archives take: the app, type and endpoint above stay, for every other operation.
  const doomedApp = await gw.request("POST", "/v3/apps", { json: { uid: "doomed", name: "Doomed" } });
  await gw.request("POST", "/v3/event-types", { json: { name: "doomed.sent" } });
  const doomedEndpoint = await gw.request("POST", "/v3/endpoints", {
    json: { app: "acme", url: "https://example.com/doomed" },
  });
  Object.assign(doomed, {
    "/v3/apps/{app}": { app: ["doomed", doomedApp.body.id] },
    "/v3/event-types/{name}": { name: ["doomed.sent"] },
    "/v3/event-types/{name}/archive": { name: ["doomed.sent"] },
    "/v3/endpoints/{id}": { id: [doomedEndpoint.body.id] },
  });
  Object.assign(known, {
    app: ["acme", app.body.id],
    id: [endpoint.body.id, event.body.id, replay.body.id, app.body.id],
    name: ["order.paid"],
    type: ["order.paid"],
    endpoint: [endpoint.body.id],
    event: [event.body.id],
    url: ["https://example.com/other"],
  });
  loop.enable();
});
afterAll(async () => {
  loop.disable();
  await gw?.close();
});

const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ ...openapi, $id: "doc" } as object);
const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/** The documented body of `status` for the operation, as an Ajv validator, if there is one. */
function documented(operation: Operation, status: number) {
  // biome-ignore lint/suspicious/noExplicitAny: the document as built
  const response = operation.op.responses?.[String(status)] as any;
  if (!response) return null;
  const where = response.$ref
    ? `doc#/${pointer("components", "responses", response.$ref.split("/").pop())}`
    : `doc#/${pointer("paths", operation.path, operation.method, "responses", String(status))}`;
  const resolved = response.$ref ? openapi.components.responses?.[response.$ref.split("/").pop()] : response;
  if (!resolved?.content?.["application/json"]?.schema) return null;
  return ajv.getSchema(`${where}/content/${pointer("application/json")}/schema`) ?? null;
}

const operations: Operation[] = Object.entries(
  openapi.paths as Record<string, Record<string, unknown>>,
).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, op })));

/** The ids an operation's `{id}` takes: those of its resource (`/v3/endpoints/{id}`: endpoints'). */
const ID_PREFIXES: Record<string, string> = {
  apps: "app_",
  endpoints: "ep_",
  events: "evt_",
  replays: "rpl_",
  attempts: "atmpt_",
  "dashboard-sessions": "ses_",
};
function knownFor({ method, path }: Operation, base = known): Record<string, string[]> {
  if ((method === "delete" || path.endsWith("/archive")) && doomed[path]) return { ...base, ...doomed[path] };
  const prefix = ID_PREFIXES[path.split("/")[2] ?? ""];
  const ids = prefix ? (base.id ?? []).filter((id) => id.startsWith(prefix)) : [];
  return ids.length ? { ...base, id: ids } : base;
}

async function send(request: FuzzRequest) {
  const res = await fetch(gw.url + request.path, {
    method: request.method,
    headers: { authorization: `Bearer ${gw.key}`, ...request.headers },
    body: request.body,
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, body, type: res.headers.get("content-type") ?? "" };
}

/** Why this answer breaks the API's promises, or null. */
function problemWith(operation: Operation, res: Awaited<ReturnType<typeof send>>): string | null {
  if (res.status >= 500) return `answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`;
  if (res.status >= 400) {
    // biome-ignore lint/suspicious/noExplicitAny: checked field by field
    const error = (res.body as any)?.error;
    if (
      !error ||
      typeof error.type !== "string" ||
      typeof error.code !== "string" ||
      typeof error.message !== "string"
    )
      return `an error outside the error format: ${JSON.stringify(res.body).slice(0, 500)}`;
    if (["parameter_invalid", "parameter_missing"].includes(error.code) && typeof error.param !== "string")
      return `${error.code} without the param at fault: ${error.message}`;
    if (/\bat (async )?\w+ \(|node_modules|\.ts:\d+/.test(error.message))
      return `a stack trace: ${error.message}`;
    return null;
  }
  if (res.status === 204) return null;
  const validate = documented(operation, res.status);
  if (!validate) return `status ${res.status} is not in the document`;
  return validate(res.body)
    ? null
    : `does not match the document: ${JSON.stringify(validate.errors).slice(0, 500)}`;
}

describe("the API under fuzzed requests", () => {
  it("never answers 500, always in the error format or as documented, with the event loop bounded", {
    timeout: Math.max(180_000, RUNS * 500),
  }, async () => {
    const statuses = new Map<number, number>();
    let tried = 0;
    const arbitrary = fc.constantFrom(...operations.map((_, i) => i)).chain((i) =>
      fc
        .boolean()
        .chain((clean) => requestFor(operations[i]!, knownFor(operations[i]!), clean ? "clean" : "hostile"))
        .map((request) => ({ i, request })),
    );
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ i, request }) => {
        const operation = operations[i]!;
        tried++;
        loop.reset();
        const res = await send(request);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const held = loop.max / 1e6;
        const problem =
          problemWith(operation, res) ??
          (held > LOOP_BOUND_MS ? `held the event loop ${Math.round(held)} ms` : null);
        if (problem) throw new Error(`${request.label}\n  ${problem}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const summary = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
    console.log(
      `API fuzzer: ${tried} requests over ${operations.length} operations, seed ${SEED}: ${summary.join(" ")}`,
    );
    expect(tried).toBe(RUNS);
    // Well-formed requests got through, not only refusals.
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
  });

  it("at the largest legal values, the same, and bodies up to the limit taken", {
    timeout: Math.max(180_000, LARGEST_RUNS * 2000),
  }, async () => {
    // 256 event types of 64 characters, the most an endpoint's `event_types` takes, each at its longest.
    const typeNames = Array.from({ length: 256 }, (_, i) => `largest.${i}.`.padEnd(64, "x"));
    for (let i = 0; i < typeNames.length; i += 16) {
      await Promise.all(
        typeNames.slice(i, i + 16).map(async (name) => {
          const res = await gw.request("POST", "/v3/event-types", { json: { name } });
          expect(res.status, JSON.stringify(res.body)).toBe(201);
        }),
      );
    }
    const largestKnown = {
      // Apps by id: a uid may change under the fuzzer.
      app: (known.app ?? []).filter((app) => app.startsWith("app_")),
      type: [...(known.type ?? []), ...typeNames],
      event_types: typeNames,
      // A signing secret of the most bytes, and a token URL to pad to its longest.
      secret: [`whsec_${Buffer.alloc(64, 7).toString("base64")}`],
      token_url: ["https://example.com/token"],
    };
    // Operations whose body holds free-form JSON, which fills to the limit, come up most.
    const weight = ({ op }: Operation) => {
      const body = op.requestBody?.content?.["application/json"]?.schema;
      return !body ? 1 : holdsFreeForm(body) ? 8 : 2;
    };
    const statuses = new Map<number, number>();
    const figures = { tried: 0, passed: 0, big: 0, bigPassed: 0, atLimit: 0, over: 0, heldMs: 0 };
    const arbitrary = fc
      .oneof(...operations.map((operation, i) => ({ arbitrary: fc.constant(i), weight: weight(operation) })))
      .chain((i) =>
        requestFor(operations[i]!, knownFor(operations[i]!, { ...known, ...largestKnown }), "largest").map(
          (request) => ({ i, request }),
        ),
      );
    await fc.assert(
      fc.asyncProperty(arbitrary, async ({ i, request }) => {
        const operation = operations[i]!;
        const bytes = request.body ? Buffer.byteLength(request.body) : 0;
        figures.tried++;
        loop.reset();
        const res = await send(request);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const held = loop.max / 1e6;
        figures.heldMs = Math.max(figures.heldMs, held);
        const passed = res.status < 300;
        if (passed) figures.passed++;
        if (bytes > 500_000) figures.big++;
        if (bytes > 500_000 && passed) figures.bigPassed++;
        if (bytes === BODY_LIMIT_BYTES) figures.atLimit++;
        if (bytes > BODY_LIMIT_BYTES) figures.over++;
        const problem =
          problemWith(operation, res) ??
          (bytes > BODY_LIMIT_BYTES && res.status !== 413
            ? `a body of ${bytes} bytes, over the limit, answered ${res.status}, not 413`
            : null) ??
          (bytes <= BODY_LIMIT_BYTES && res.status === 413
            ? `a body of ${bytes} bytes, within the limit, answered 413: ${JSON.stringify(res.body)}`
            : null) ??
          (held > LOOP_BOUND_MS ? `held the event loop ${Math.round(held)} ms` : null);
        if (problem) throw new Error(`${request.label}\n  ${problem}`);
      }),
      { seed: SEED, numRuns: LARGEST_RUNS, endOnFailure: true },
    );
    const summary = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
    console.log(
      `API fuzzer, largest values: ${figures.tried} requests over ${operations.length} operations, seed ${SEED}: ${summary.join(" ")}; ` +
        `${figures.big} bodies over 500 KB (${figures.bigPassed} taken), ${figures.atLimit} of exactly ${BODY_LIMIT_BYTES} bytes, ` +
        `${figures.over} over it; event loop held ${Math.round(figures.heldMs)} ms at most`,
    );
    expect(figures.tried).toBe(LARGEST_RUNS);
    // The largest values got through, not only refusals: bodies of half a megabyte and more too.
    expect(figures.passed).toBeGreaterThan(0);
    expect(figures.big).toBeGreaterThan(0);
    expect(figures.bigPassed).toBeGreaterThan(0);
  });
});
