import type { Schema } from "../http/route.ts";

/** HTML helpers for the API reference, and JSON Schema rendered as readable types. */

export type Field = { name: string; schema: Schema; required: boolean; in?: string };

// ---- HTML helpers ----

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** Escaped text, with `x` shown as code. */
export function inline(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

export const p = (text: string): string => `<p>${inline(text)}</p>`;
export const pre = (code: string): string => `<pre><code>${escapeHtml(code)}</code></pre>`;
export const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, "-");
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
export const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];

export function table(head: string[], rows: string[][]): string {
  const th = head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join("");
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("");
  return `<div class="table-wrap"><table><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table></div>`;
}

// ---- JSON Schema to readable types ----

export function refName(schema: unknown): string | undefined {
  return isRecord(schema) && typeof schema.$ref === "string" ? schema.$ref.split("/").pop() : undefined;
}

export const schemaLink = (name: string): string => `<a href="#schema-${slug(name)}">${escapeHtml(name)}</a>`;
export const literal = (v: unknown): string =>
  `<code>${escapeHtml(typeof v === "string" ? v : JSON.stringify(v))}</code>`;

function typeHtml(schema: unknown): string {
  if (!isRecord(schema)) return "any";
  const ref = refName(schema);
  if (ref) return schemaLink(ref);
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(literal).join(", ")}`;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants)) return variants.map(typeHtml).join(" or ");
  const types = typeof schema.type === "string" ? [schema.type] : strings(schema.type);
  return types.length ? types.map((t) => singleType(t, schema)).join(" or ") : "any JSON";
}

function singleType(type: string, schema: Schema): string {
  if (type === "array") return `array of ${typeHtml(schema.items)}`;
  if (type === "object" && isRecord(schema.additionalProperties))
    return `map of ${typeHtml(schema.additionalProperties)}`;
  if (type === "string" && typeof schema.format === "string") return `string (${escapeHtml(schema.format)})`;
  return escapeHtml(type);
}

/** Bounds, defaults and examples, as short sentences with code in backticks. */
function constraints(s: Schema): string[] {
  const range = (min: unknown, max: unknown, unit: string): string[] => {
    if (typeof min === "number" && typeof max === "number") return [`${min} to ${max}${unit}.`];
    if (typeof max === "number") return [`At most ${max}${unit}.`];
    return typeof min === "number" && min > 0 ? [`At least ${min}${unit}.`] : [];
  };
  const example = strings(s.examples)[0];
  return [
    ...range(s.minimum, s.maximum, ""),
    ...range(s.minLength, s.maxLength, " characters"),
    ...range(undefined, s.maxItems, " items"),
    ...range(undefined, s.maxProperties, " entries"),
    ...(typeof s.pattern === "string" ? [`Pattern \`${s.pattern}\`.`] : []),
    ...(s.default !== undefined ? [`Default \`${JSON.stringify(s.default)}\`.`] : []),
    ...(example ? [`Example \`${example}\`.`] : []),
  ];
}

function describe(s: Schema): string {
  const text = typeof s.description === "string" ? inline(s.description) : "";
  const notes = constraints(s);
  return notes.length ? `${text}<span class="note">${inline(notes.join(" "))}</span>` : text;
}

/** The properties of an object schema; inline objects (and arrays of them) are flattened as `a.b`. */
export function fieldsOf(schema: unknown, prefix = ""): Field[] {
  if (!isRecord(schema) || !isRecord(schema.properties)) return [];
  const required = new Set(strings(schema.required));
  return Object.entries(schema.properties).flatMap(([key, value]) => {
    const s = isRecord(value) ? value : {};
    const name = prefix + key;
    const nested = s.type === "array" ? fieldsOf(s.items, `${name}[].`) : fieldsOf(s, `${name}.`);
    return [{ name, schema: s, required: required.has(key) }, ...nested];
  });
}

export function fieldTable(fields: Field[], withRequired: boolean): string {
  const name = (f: Field) =>
    `<code>${escapeHtml(f.name)}</code>${f.in ? `<span class="in">${escapeHtml(f.in)}</span>` : ""}`;
  const req = (f: Field) =>
    f.required ? `<span class="req">required</span>` : `<span class="optional">optional</span>`;
  const rows = fields.map((f) => [
    name(f),
    typeHtml(f.schema),
    ...(withRequired ? [req(f)] : []),
    describe(f.schema),
  ]);
  return table(["Name", "Type", ...(withRequired ? ["Required"] : []), "Description"], rows);
}
