import { deepExpansionProblem } from "./expansion.ts";
import { expansionProblem, graph, pointerPart } from "./references.ts";

/**
 * What one schema may cost, checked before Ajv sees it. Ajv's own work grows with these: its
 * compile time with the schema's size (about 25 µs a byte), its recursion with the depth, and
 * its validation time with how many subschemas apply at one place in the data: `$ref`s and
 * `allOf`/`anyOf`/`oneOf` are followed, not shared, so 22 levels of `oneOf: [$ref, $ref]` make
 * 4 million checks of a single value, and a `$ref` that leads back to itself without going into
 * the data never ends. Each limit over is named in the problem, with where it is.
 */
export const SCHEMA_LIMITS = {
  /** Bytes of the schema as JSON. */
  bytes: 65_536,
  /** Levels of nesting of the schema's JSON. */
  depth: 32,
  /** Subschemas that apply at one place in the data, `$ref`s followed. */
  expansion: 1_000,
} as const;

export type Violation = { path: string; message: string };
export type Node = Record<string, unknown>;

/** The first place nested deeper than the limit, walked without recursion. */
function tooDeep(schema: unknown): Violation | null {
  const stack: [unknown, string, number][] = [[schema, "", 0]];
  while (stack.length) {
    const [value, path, depth] = stack.pop() as [unknown, string, number];
    if (typeof value !== "object" || value === null) continue;
    if (depth >= SCHEMA_LIMITS.depth) {
      return {
        path: path || "/",
        message: `is nested more than ${SCHEMA_LIMITS.depth} levels deep (schema depth)`,
      };
    }
    for (const [key, child] of Object.entries(value))
      stack.push([child, `${path}/${pointerPart(key)}`, depth + 1]);
  }
  return null;
}

/** The first limit `schema` (a JSON object) is over, or null. */
export function overBudget(schema: Node): Violation | null {
  const deep = tooDeep(schema);
  if (deep) return deep;
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > SCHEMA_LIMITS.bytes) {
    return { path: "/", message: `is ${bytes} bytes as JSON; at most ${SCHEMA_LIMITS.bytes} (schema size)` };
  }
  const refs = graph(schema);
  const limit = SCHEMA_LIMITS.expansion;
  return refs.badRef ?? expansionProblem(refs, limit) ?? deepExpansionProblem(schema, refs, limit);
}
