/**
 * An example payload made from an event type's JSON Schema, for the portal's catalog and its
 * test events: the schema's own `examples`, `default`, `const` or first `enum` value where it
 * gives one, else a plausible value of the type (formats honoured), every property filled.
 * Local `$ref`s (`#/definitions/…`, `#/$defs/…`) are followed, to a depth of 8.
 */
type Schema = Record<string, unknown>;

const FORMATS: Record<string, string> = {
  "date-time": "2026-11-21T10:00:00.000Z",
  date: "2026-11-21",
  time: "10:00:00Z",
  email: "customer@example.com",
  uri: "https://example.com/",
  url: "https://example.com/",
  uuid: "3fa85f64-5717-4562-b3fc-2c963f66afa6",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
};

const isSchema = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

function resolve(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(2).split("/"))
    node = isSchema(node) ? node[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  return isSchema(node) ? node : undefined;
}

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") ?? t[0]) as string | undefined;
  if (typeof t === "string") return t;
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function stringExample(schema: Schema): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  if (format) return format;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const base = "string";
  return base.length >= min ? base : base.padEnd(min, "x");
}

function numberExample(schema: Schema, integer: boolean): number {
  const min =
    typeof schema.minimum === "number"
      ? schema.minimum
      : typeof schema.exclusiveMinimum === "number"
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : undefined;
  const max = typeof schema.maximum === "number" ? schema.maximum : undefined;
  let value = min ?? (max !== undefined ? Math.min(max, 0) : integer ? 42 : 4.2);
  if (integer) value = Math.ceil(value);
  return value;
}

function example(schema: unknown, root: Schema, depth: number): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  if (typeof schema.$ref === "string") return example(resolve(schema.$ref, root), root, depth + 1);
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  for (const key of ["oneOf", "anyOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length) return example(options[0], root, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => example(s, root, depth + 1));
    if (parts.every(isSchema)) return Object.assign({}, ...parts);
  }
  switch (typeOf(schema)) {
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties).map(([name, s]) => [name, example(s, root, depth + 1)]),
      );
    }
    case "array": {
      const count = typeof schema.minItems === "number" ? Math.max(1, schema.minItems) : 1;
      return Array.from({ length: count }, () => example(schema.items, root, depth + 1));
    }
    case "string":
      return stringExample(schema);
    case "integer":
      return numberExample(schema, true);
    case "number":
      return numberExample(schema, false);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return null;
  }
}

export function exampleFromSchema(schema: unknown): unknown {
  return isSchema(schema) ? example(schema, schema, 0) : {};
}
