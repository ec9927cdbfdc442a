/**
 * An example payload made from an event type's JSON Schema, for the portal's catalog and its
 * test events: the schema's own `examples`, `default`, `const` or first `enum` value where it
 * gives one, else a plausible value of the type (formats honoured), every property filled.
 * Local `$ref`s (`#/definitions/…`, `#/$defs/…`) are followed, to a depth of 8.
 *
 * An example is made on every read of its type, so it has a budget: `minItems` and `minLength`
 * multiply down the levels (`minItems: 1000` on an array of itself is 1000⁸ values), and an
 * example over EXAMPLE_LIMITS is refused with the schema when it is created (ExampleTooLarge).
 */
type Schema = Record<string, unknown>;

export const EXAMPLE_LIMITS = {
  /** Values (objects, arrays, strings, numbers…) in one example. */
  values: 1_000,
  /** Characters of the strings the example makes up (`minLength`). */
  characters: 16_384,
} as const;

export class ExampleTooLarge extends Error {
  constructor() {
    super(
      `its example payload would have more than ${EXAMPLE_LIMITS.values} values or ${EXAMPLE_LIMITS.characters} characters (minItems and minLength add up through nesting and $refs; example size)`,
    );
  }
}

/** What is left to spend, and the `$ref`s resolved so far: each is walked once, however often used. */
type Budget = { values: number; characters: number; refs: Map<string, Schema | undefined> };

function spend(budget: Budget, values: number, characters = 0): void {
  budget.values -= values;
  budget.characters -= characters;
  if (budget.values < 0 || budget.characters < 0) throw new ExampleTooLarge();
}

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

function resolve(ref: string, root: Schema, budget: Budget): Schema | undefined {
  if (budget.refs.has(ref)) return budget.refs.get(ref);
  let node: unknown = ref.startsWith("#/") ? root : undefined;
  for (const part of ref.slice(2).split("/")) {
    if (!isSchema(node)) break;
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node = Object.hasOwn(node, key) ? node[key] : undefined;
  }
  const target = isSchema(node) ? node : undefined;
  budget.refs.set(ref, target);
  return target;
}

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return (t.find((x) => x !== "null") ?? t[0]) as string | undefined;
  if (typeof t === "string") return t;
  if (isSchema(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function stringExample(schema: Schema, budget: Budget): string {
  const format = typeof schema.format === "string" ? FORMATS[schema.format] : undefined;
  if (format) return format;
  const min = typeof schema.minLength === "number" ? schema.minLength : 0;
  const base = "string";
  if (base.length >= min) return base;
  spend(budget, 0, min);
  return base.padEnd(min, "x");
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

/** The schema's own example value: `examples[0]`, `default`, `const` or `enum[0]`. */
function givenValue(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  return undefined;
}

function example(schema: unknown, root: Schema, depth: number, budget: Budget): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  spend(budget, 1);
  const next = (s: unknown) => example(s, root, depth + 1, budget);
  if (typeof schema.$ref === "string") return next(resolve(schema.$ref, root, budget));
  const given = givenValue(schema);
  if (given !== undefined) {
    // Its characters count each time it is used: an array of a large default repeats it.
    spend(budget, 0, JSON.stringify(given)?.length ?? 0);
    return given;
  }
  for (const key of ["oneOf", "anyOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length) return next(options[0]);
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map(next);
    if (parts.every(isSchema)) return Object.assign({}, ...parts);
  }
  switch (typeOf(schema)) {
    case "object": {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(properties).map(([name, s]) => [name, next(s)]));
    }
    case "array": {
      const count = typeof schema.minItems === "number" ? Math.max(1, schema.minItems) : 1;
      // Checked before the array is made: `minItems: 1e9` must not allocate first.
      if (count > budget.values) throw new ExampleTooLarge();
      return Array.from({ length: count }, () => next(schema.items));
    }
    case "string":
      return stringExample(schema, budget);
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

/** The example payload of `schema`; throws ExampleTooLarge when it is over EXAMPLE_LIMITS. */
export function exampleFromSchema(schema: unknown): unknown {
  return isSchema(schema) ? example(schema, schema, 0, { ...EXAMPLE_LIMITS, refs: new Map() }) : {};
}

/** The example, or null where it is over budget: for schemas stored before the budget. */
export function exampleOrNull(schema: unknown): unknown {
  try {
    return exampleFromSchema(schema);
  } catch (err) {
    if (err instanceof ExampleTooLarge) return null;
    throw err;
  }
}
