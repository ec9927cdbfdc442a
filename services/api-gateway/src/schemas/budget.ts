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
type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
const pointerPart = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");
const fromPointerPart = (part: string) => part.replace(/~1/g, "/").replace(/~0/g, "~");

/** Keywords whose subschemas apply where the schema does, and those that apply to its children. */
const SAME_PLACE_ONE = ["not", "if", "then", "else"];
const SAME_PLACE_MANY = ["allOf", "anyOf", "oneOf"];
const SAME_PLACE_MAP = ["dependentSchemas", "dependencies"];
const INNER_ONE = [
  "additionalProperties",
  "items",
  "additionalItems",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contentSchema",
];
const INNER_MANY = ["prefixItems", "items"];
const INNER_MAP = ["properties", "patternProperties", "$defs", "definitions"];

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

/** Every subschema with its JSON Pointer, and the subschemas that apply where each does. */
function graph(root: Node) {
  const sameAt = new Map<Node, Node[]>();
  const pathOf = new Map<Node, string>();
  const anchors = new Map<string, Node>();
  const resolve = (ref: string): Node | undefined => {
    if (ref === "#") return root;
    if (!ref.startsWith("#")) return undefined;
    if (!ref.startsWith("#/")) return anchors.get(ref.slice(1));
    let node: unknown = root;
    for (const part of ref.slice(2).split("/")) {
      const key = fromPointerPart(decodeURIComponent(part));
      node = typeof node === "object" && node !== null ? (node as Node)[key] : undefined;
    }
    return isNode(node) ? node : undefined;
  };
  const refs: [Node, string][] = [];
  const visit = (node: unknown, path: string) => {
    if (!isNode(node) || pathOf.has(node)) return;
    pathOf.set(node, path || "/");
    const same: Node[] = [];
    sameAt.set(node, same);
    if (typeof node.$anchor === "string") anchors.set(node.$anchor, node);
    for (const key of ["$ref", "$dynamicRef", "$recursiveRef"])
      if (typeof node[key] === "string") refs.push([node, node[key] as string]);
    const at = (key: string) => `${path}/${pointerPart(key)}`;
    for (const key of SAME_PLACE_ONE) if (isNode(node[key])) same.push(node[key] as Node);
    for (const key of SAME_PLACE_MANY) {
      const list = node[key];
      if (Array.isArray(list)) for (const s of list) if (isNode(s)) same.push(s);
    }
    for (const key of SAME_PLACE_MAP) {
      const map = node[key];
      if (isNode(map)) for (const s of Object.values(map)) if (isNode(s)) same.push(s);
    }
    for (const key of [...SAME_PLACE_ONE, ...INNER_ONE]) visit(node[key], at(key));
    for (const key of [...SAME_PLACE_MANY, ...INNER_MANY]) {
      const list = node[key];
      if (Array.isArray(list)) for (const [i, s] of list.entries()) visit(s, `${at(key)}/${i}`);
    }
    for (const key of [...SAME_PLACE_MAP, ...INNER_MAP]) {
      const map = node[key];
      if (isNode(map))
        for (const [name, s] of Object.entries(map)) visit(s, `${at(key)}/${pointerPart(name)}`);
    }
  };
  visit(root, "");
  for (const [node, ref] of refs) {
    const target = resolve(ref);
    if (target) sameAt.get(node)?.push(target);
  }
  return { sameAt, pathOf };
}

/**
 * How many subschemas apply at one place in the data, at most, from any subschema; or the
 * `$ref` loop that never goes into the data.
 */
function expansionProblem(root: Node): Violation | null {
  const { sameAt, pathOf } = graph(root);
  const count = new Map<Node, number>();
  const onPath = new Set<Node>();
  const limit = SCHEMA_LIMITS.expansion;
  let loop: Node | null = null;
  const expand = (node: Node): number => {
    const known = count.get(node);
    if (known !== undefined) return known;
    if (onPath.has(node)) {
      loop = node;
      return Number.POSITIVE_INFINITY;
    }
    // A chain of $refs longer than the limit is over it already; no need to go deeper.
    if (onPath.size > limit) return limit + 1;
    onPath.add(node);
    let total = 1;
    for (const next of sameAt.get(node) ?? []) {
      total += expand(next);
      if (loop) break;
      if (total > limit) break;
    }
    onPath.delete(node);
    count.set(node, total);
    return total;
  };
  for (const node of sameAt.keys()) {
    const total = expand(node);
    if (loop) {
      return {
        path: pathOf.get(loop) ?? "/",
        message:
          "leads back to itself through $ref, allOf, anyOf or oneOf without going into the data: checking would never end",
      };
    }
    if (total > limit) {
      return {
        path: pathOf.get(node) ?? "/",
        message: `applies more than ${limit} subschemas to one value, $refs followed (schema expansion)`,
      };
    }
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
  return expansionProblem(schema);
}
