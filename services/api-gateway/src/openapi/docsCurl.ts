import type { Schema } from "../http/route.ts";
import { fieldsOf, isRecord, strings } from "./docsHtml.ts";
import type { Operation } from "./document.ts";

/** The curl example shown under each operation of the API reference. */

export type Entry = { method: string; path: string; op: Operation };
type Sample = string | readonly string[] | Readonly<Record<string, string>> | null;

export function jsonBody(op: Operation): Schema | undefined {
  return op.requestBody?.content["application/json"]?.schema;
}

// ---- curl examples ----

const SAMPLE_IDS: Record<string, string> = {
  apps: "acme",
  endpoints: "ep_01JD3Z6Q4X6N3V8H2K9T5R7M1B",
  events: "evt_01JD3Z6Q4X6N3V8H2K9T5R7M1B",
  attempts: "atmpt_01JD3Z6Q4X6N3V8H2K9T5R7M1B",
  replays: "rpl_01JD3Z6Q4X6N3V8H2K9T5R7M1B",
  "api-keys": "key_01JD3Z6Q4X6N3V8H2K9T5R7M1B",
  "event-types": "invoice.paid",
};

/** Example values by `Tag.field` or `field`; null leaves an optional field out of the example. */
const SAMPLES: Record<string, Sample> = {
  "Apps.name": "Acme",
  "Event types.name": "invoice.paid",
  "Event types.description": "An invoice was paid.",
  "API keys.name": "ci",
  "Operator.name": "Acme Inc",
  "Endpoints.event": null,
  "Attempts.event": null,
  uid: "acme",
  app: "acme",
  url: "https://example.com/webhooks/herald",
  type: "invoice.paid",
  data: '{"invoice":"in_1042","amount_due":4200,"currency":"eur"}',
  schema: '{"type":"object","required":["invoice"],"properties":{"invoice":{"type":"string"}}}',
  event_types: ["invoice.paid", "invoice.voided"],
  headers: { "X-Tenant": "acme" },
  since: "2026-11-21T00:00:00Z",
  endpoint: SAMPLE_IDS.endpoints!,
  event: SAMPLE_IDS.events!,
  status: "failed",
  include_archived: "true",
};

function sampleFor(tag: string, name: string): Sample | undefined {
  const key = `${tag}.${name}`;
  return key in SAMPLES ? SAMPLES[key] : SAMPLES[name];
}

function shellQuote(arg: string): string {
  return /^[\w.~:/=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** A field whose value is any JSON (an object that is not a string map, or untyped): a JSON string in a form. */
function isJsonValued(s: Schema): boolean {
  const untyped = !["type", "enum", "const", "anyOf", "oneOf", "$ref"].some((k) => k in s);
  const object = s.type === "object" || strings(s.type).includes("object");
  return untyped || (object && !isRecord(s.additionalProperties));
}

function formArgs(name: string, schema: Schema, sample: NonNullable<Sample>): string[] {
  const d = (arg: string) => `-d ${shellQuote(arg)}`;
  if (Array.isArray(sample)) return sample.map((v) => d(`${name}[]=${v}`));
  if (typeof sample !== "string") return Object.entries(sample).map(([k, v]) => d(`${name}[${k}]=${v}`));
  const plain = /^[\w.~:/-]*$/.test(sample) && !isJsonValued(schema);
  return [plain ? d(`${name}=${sample}`) : `--data-urlencode ${shellQuote(`${name}=${sample}`)}`];
}

function bodyArgs({ path, op }: Entry): string[] {
  const tag = op.tags[0] ?? "";
  return fieldsOf(jsonBody(op))
    .filter((f) => !f.name.includes(".") && !path.includes(`{${f.name}}`))
    .flatMap((f) => {
      const sample = sampleFor(tag, f.name);
      if (sample === null || (sample === undefined && !f.required)) return [];
      return formArgs(f.name, f.schema, sample ?? "value");
    });
}

function exampleUrl({ path, op }: Entry): string {
  const filled = path.replace(
    /\/([^/]+)\/\{\w+\}/g,
    (_m, coll: string) => `/${coll}/${SAMPLE_IDS[coll] ?? "id"}`,
  );
  const query = op.parameters.filter((x) => x.in === "query");
  const pairs = query
    .map((x) => [x.name, sampleFor(op.tags[0] ?? "", x.name)] as const)
    .filter((pair): pair is readonly [string, string] => typeof pair[1] === "string")
    .slice(0, 2)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
  if (query.some((x) => x.name === "limit")) pairs.push("limit=10");
  return `"$HERALD_URL${filled}${pairs.length ? `?${pairs.join("&")}` : ""}"`;
}

export function curlExample(entry: Entry): string {
  const { method, op } = entry;
  const body = bodyArgs(entry);
  const token = op.security.some((s) => "adminToken" in s) ? "$HERALD_ADMIN_TOKEN" : "$HERALD_API_KEY";
  const creates = Object.keys(op.responses).includes("201");
  return [
    `curl ${method === "delete" || (method === "post" && !body.length) ? `-X ${method.toUpperCase()} ` : ""}${exampleUrl(entry)}`,
    ...(op.security.length ? [`-H "Authorization: Bearer ${token}"`] : []),
    ...(creates && op.parameters.some((x) => x.name === "Idempotency-Key")
      ? [`-H "Idempotency-Key: 4f9c2a1e-7b3d-4e8f-9a6b-1c2d3e4f5a6b"`]
      : []),
    ...body,
  ].join(" \\\n  ");
}
