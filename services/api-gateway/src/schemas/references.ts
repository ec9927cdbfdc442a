import type { Node, Violation } from "./budget.ts";

/**
 * A schema's subschemas as Ajv will apply them: which apply at the same place in the data
 * (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, dependent schemas, and where each
 * `$ref` leads), for the budget's count of them (budget.ts, expansion.ts).
 */
export const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null && !Array.isArray(v);
export const pointerPart = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");
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

export type Graph = {
  /** The subschemas that apply where each does: its `allOf`/`anyOf`/`oneOf`/… and `$ref` targets. */
  sameAt: Map<Node, Node[]>;
  pathOf: Map<Node, string>;
  /** A reference the analysis cannot follow as Ajv would, and where it is. */
  badRef: Violation | null;
};

/**
 * Every subschema with its JSON Pointer, and the subschemas that apply where each does.
 * References are followed as Ajv resolves them, within this schema only: `#/…` pointers,
 * `#anchor`s, and the root's own `$id` before either. Anything else (another document, a
 * pointer under a subschema with an `$id` of its own, which Ajv reads against that `$id`) is
 * refused rather than left out of the count.
 */
export function graph(root: Node): Graph {
  const sameAt = new Map<Node, Node[]>();
  const pathOf = new Map<Node, string>();
  const anchors = new Map<string, Node>();
  const rootId = typeof root.$id === "string" ? root.$id.replace(/#.*$/, "") : null;
  const resolve = (reference: string): Node | undefined => {
    const ref = rootId && reference.startsWith(`${rootId}#`) ? reference.slice(rootId.length) : reference;
    if (ref === "#") return root;
    if (!ref.startsWith("#")) return undefined;
    if (!ref.startsWith("#/")) return anchors.get(ref.slice(1));
    let node: unknown = root;
    for (const part of ref.slice(2).split("/")) {
      let key: string;
      try {
        key = fromPointerPart(decodeURIComponent(part));
      } catch {
        return undefined;
      }
      node = isNode(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    }
    return isNode(node) ? node : undefined;
  };
  const refs: [Node, string, boolean][] = [];
  const visit = (node: unknown, path: string, underId: boolean) => {
    if (!isNode(node) || pathOf.has(node)) return;
    pathOf.set(node, path || "/");
    const same: Node[] = [];
    sameAt.set(node, same);
    const inner = underId || (node !== root && typeof node.$id === "string");
    for (const key of ["$anchor", "$dynamicAnchor"])
      if (typeof node[key] === "string") anchors.set(node[key] as string, node);
    for (const key of ["$ref", "$dynamicRef", "$recursiveRef"])
      if (typeof node[key] === "string") refs.push([node, node[key] as string, inner]);
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
    for (const key of [...SAME_PLACE_ONE, ...INNER_ONE]) visit(node[key], at(key), inner);
    for (const key of [...SAME_PLACE_MANY, ...INNER_MANY]) {
      const list = node[key];
      if (Array.isArray(list)) for (const [i, s] of list.entries()) visit(s, `${at(key)}/${i}`, inner);
    }
    for (const key of [...SAME_PLACE_MAP, ...INNER_MAP]) {
      const map = node[key];
      if (isNode(map))
        for (const [name, s] of Object.entries(map)) visit(s, `${at(key)}/${pointerPart(name)}`, inner);
    }
  };
  visit(root, "", false);
  let badRef: Violation | null = null;
  for (const [node, ref, underId] of refs) {
    const target = underId ? undefined : resolve(ref);
    if (target) sameAt.get(node)?.push(target);
    else
      badRef ??= {
        path: pathOf.get(node) ?? "/",
        message: underId
          ? `refers to ${JSON.stringify(ref.slice(0, 100))} under a subschema with its own $id: refer from the root instead (#/$defs/…)`
          : `refers to ${JSON.stringify(ref.slice(0, 100))}, which is not in this schema: only #/… pointers and #anchors within it are followed`,
      };
  }
  return { sameAt, pathOf, badRef };
}

/**
 * How many subschemas apply at one place in the data, at most, from any subschema; or the
 * `$ref` loop that never goes into the data.
 */
export function expansionProblem({ sameAt, pathOf }: Graph, limit: number): Violation | null {
  const count = new Map<Node, number>();
  const onPath = new Set<Node>();
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
