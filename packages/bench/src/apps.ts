import { randomBytes } from "node:crypto";
import type { Gateway } from "./protocol.ts";

/** The one event type every benchmark event has; no schema, so nothing is validated. */
export const EVENT_TYPE = "bench.tested";
/** A POST /v3/events body of about 1 KB, the size the ceilings are measured with. */
const PAD = "x".repeat(920);

export function eventBody(app: string, seq: number): string {
  return JSON.stringify({ app, type: EVENT_TYPE, data: { seq, pad: PAD } });
}

/**
 * An app the benchmark sends to, where each of its endpoints' deliveries are counted (its path on
 * the load generator's receivers, or its Redis stream), and their ids.
 */
export type BenchApp = { uid: string; paths: string[]; endpointIds: string[] };
export type BenchApps = {
  ingest: BenchApp;
  one: BenchApp;
  ten: BenchApp;
  /**
   * Ten endpoints, each with a filter every benchmark event passes: what filtering costs fan-out.
   * Null on a build from before filters (`--against` an older commit), whose API refuses them.
   */
  tenFiltered: BenchApp | null;
  /**
   * Ten endpoints, each with a small transformation (BENCH_TRANSFORMATION): what running customer
   * code before each delivery costs fan-out. Null on a build whose API refuses transformations.
   */
  tenTransformed: BenchApp | null;
  /**
   * Two apps of 1 endpoint each, one with BENCH_TRANSFORMATION and one plain, loaded at the same
   * time: what a transformation costs an endpoint beside one without. Null on a build whose API
   * refuses transformations.
   */
  transformedBesidePlain: { transformed: BenchApp; plain: BenchApp } | null;
  noisy: BenchApp;
  /**
   * The destination scenario's (`--destination redis`): 10 endpoints on the receivers, and 10
   * whose URLs are Redis streams on `redisUrl`, one each (`paths` names them). Null without the
   * option, or on a build whose API refuses redis:// URLs.
   */
  destination: { http: BenchApp; redis: BenchApp; redisUrl: string } | null;
};

/**
 * A filter of the usual kind that every benchmark event passes (its payload read, paths
 * followed, operators applied), so the deliveries are those of the unfiltered ten.
 */
export const BENCH_FILTER = {
  type: EVENT_TYPE,
  "data.seq": { $gte: 0 },
  "data.pad": { $exists: true },
  $or: [{ "data.kind": { $in: ["a", "b"] } }, { "data.kind": { $exists: false } }],
};

/**
 * A transformation of the usual kind (docs/transformations.md's Slack example): the payload read
 * and reshaped into a chat message, and a header added. It keeps the URL and Herald's headers,
 * so its deliveries reach the receivers at the endpoints' own paths and are counted as every
 * scenario's are (by `webhook-id` and path), whatever the body.
 */
export const BENCH_TRANSFORMATION = `function handler(webhook) {
  const { data } = webhook.payload;
  webhook.payload = {
    text: \`\${webhook.eventType} #\${data.seq}: \${data.pad.length} characters of detail\`,
    event: webhook.event_id,
  };
  webhook.headers["x-event-type"] = webhook.event_type;
  return webhook;
}`;

/** What an endpoint the benchmark makes has besides its URL. */
type EndpointOptions = { filter?: object; transformation?: string; redisUrl?: string };

async function call(gateway: Gateway, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(new URL(path, gateway.baseUrl), {
    method,
    headers: { authorization: `Bearer ${gateway.apiKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** An API error's body (`{"error":{"message":…, "code":…}}`), or nothing. */
function apiError(body: string): { message?: unknown; code?: unknown } {
  try {
    return (JSON.parse(body) as { error?: { message?: unknown; code?: unknown } }).error ?? {};
  } catch {
    return {};
  }
}

/** The message of an API error's body, or the body's start. */
function errorMessage(body: string): string {
  const { message } = apiError(body);
  return typeof message === "string" ? message : body.slice(0, 120);
}

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    path: string,
  ) {
    super(`POST ${path} answered ${status}: ${body}`);
  }
}

/** Creates a resource; its JSON (null on an allowed conflict), or a Refused error. */
async function create(
  gateway: Gateway,
  path: string,
  body: unknown,
  allowConflict = false,
): Promise<{ id?: string } | null> {
  const res = await call(gateway, "POST", path, body);
  const text = await res.text();
  if (res.status === 201) return JSON.parse(text) as { id?: string };
  if (allowConflict && res.status === 409) return null;
  throw new Refused(res.status, text, path);
}

/**
 * Through the API: one event type, an app with no endpoints (ingest alone), one with 1 endpoint,
 * one with 10, one with 10 each filtered (BENCH_FILTER), one with 10 each transformed
 * (BENCH_TRANSFORMATION), two of 1 endpoint side by side (one transformed, one plain), and the
 * noisy neighbour's (1 endpoint, made to hang by the receivers), each endpoint at
 * `http://127.0.0.1:<receiverPort>/<app>/<n>`;
 * with `redisUrl`, the destination scenario's two (`destination`), the streams'
 * `<redisUrl>?stream=herald_bench_<run>_<n>`. Uids are new each run, so a running system (--url)
 * can be benchmarked again without clashing. A build whose API refuses endpoint filters (a 400
 * about `filter`: one from before them) gets no filtered app, one that refuses `transformation`
 * no transformed apps, one that refuses redis:// URLs no destination apps, and `say` is told.
 */
export async function createApps(
  gateway: Gateway,
  receiverPort: number,
  say: (line: string) => void = () => {},
  redisUrl: string | null = null,
): Promise<BenchApps> {
  await create(gateway, "/v3/event-types", { name: EVENT_TYPE, description: "Benchmark events" }, true);
  const run = randomBytes(4).toString("hex");
  const app = async (name: string, endpoints: number, o: EndpointOptions = {}): Promise<BenchApp> => {
    const uid = `bench_${run}_${name}`;
    await create(gateway, "/v3/apps", { uid, name: `Benchmark ${name}` });
    const paths = Array.from({ length: endpoints }, (_, n) =>
      o.redisUrl ? `herald_bench_${run}_${n}` : `/${uid}/${n}`,
    );
    const endpointIds: string[] = [];
    for (const path of paths) {
      const made = await create(gateway, "/v3/endpoints", {
        app: uid,
        url: o.redisUrl ? `${o.redisUrl}?stream=${path}` : `http://127.0.0.1:${receiverPort}${path}`,
        ...(o.filter ? { filter: o.filter } : {}),
        ...(o.transformation ? { transformation: o.transformation } : {}),
      });
      if (!made?.id) throw new Error(`POST /v3/endpoints answered without an id: ${JSON.stringify(made)}`);
      endpointIds.push(made.id);
    }
    return { uid, paths, endpointIds };
  };
  const filtered = async (): Promise<BenchApp | null> => {
    try {
      return await app("ten_filtered", 10, { filter: BENCH_FILTER });
    } catch (err) {
      if (!(err instanceof Refused && err.status === 400 && /filter/i.test(err.body))) throw err;
      say(`this build's API refuses endpoint filters ("${errorMessage(err.body)}"): no filtered scenario`);
      return null;
    }
  };
  /** An app whose endpoints each run BENCH_TRANSFORMATION; null when the API refuses them (said once). */
  let transformationsRefused = false;
  const transformed = async (name: string, endpoints: number): Promise<BenchApp | null> => {
    if (transformationsRefused) return null;
    try {
      return await app(name, endpoints, { transformation: BENCH_TRANSFORMATION });
    } catch (err) {
      // A build that runs transformations but will not compile this one is the benchmark's fault.
      const refused =
        err instanceof Refused &&
        err.status === 400 &&
        /transformation/i.test(err.body) &&
        apiError(err.body).code !== "transformation_invalid";
      if (!refused) throw err;
      transformationsRefused = true;
      say(
        `this build's API refuses endpoint transformations ("${errorMessage(err.body)}"): no transformed scenarios (10 each transformed, transformed beside plain)`,
      );
      return null;
    }
  };
  const besidePlain = async (): Promise<BenchApps["transformedBesidePlain"]> => {
    const one = await transformed("one_transformed", 1);
    return one ? { transformed: one, plain: await app("one_plain", 1) } : null;
  };
  const destination = async (url: string): Promise<BenchApps["destination"]> => {
    let redis: BenchApp;
    try {
      redis = await app("destination_redis", 10, { redisUrl: url });
    } catch (err) {
      if (!(err instanceof Refused && err.status === 400)) throw err;
      say(
        `this build's API refuses redis:// endpoints ("${errorMessage(err.body)}"): no destination scenario`,
      );
      return null;
    }
    return { http: await app("destination_http", 10), redis, redisUrl: url };
  };
  return {
    ingest: await app("ingest", 0),
    one: await app("one", 1),
    ten: await app("ten", 10),
    tenFiltered: await filtered(),
    tenTransformed: await transformed("ten_transformed", 10),
    transformedBesidePlain: await besidePlain(),
    noisy: await app("noisy", 1),
    destination: redisUrl ? await destination(redisUrl) : null,
  };
}

/** Deletes the apps (and so their endpoints): for a system the benchmark did not start itself. */
export async function deleteApps(gateway: Gateway, apps: BenchApps): Promise<void> {
  const { destination, transformedBesidePlain: pair, ...rest } = apps;
  const all = [...Object.values(rest), pair?.transformed, pair?.plain, destination?.http, destination?.redis];
  for (const app of all) if (app) await call(gateway, "DELETE", `/v3/apps/${app.uid}`);
}
