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
 * `#anchor`s (draft-07's `$id: "#name"` too), and references relative to the root's `$id`.
 * Anything else (another document, a pointer under a subschema with an `$id` of its own, which
 * Ajv reads against that `$id`) is refused rather than left out of the count.
 */
export function graph(root: Node): Graph {
  const sameAt = new Map<Node, Node[]>();
  const pathOf = new Map<Node, string>();
  const anchors = new Map<string, Node>();
  const rootId = typeof root.$id === "string" ? root.$id : null;
  /** The reference as a fragment of this schema (`#…`), or null for another document. */
  const local = (reference: string): string | null => {
    if (reference.startsWith("#")) return reference;
    if (!rootId) return null;
    try {
      const target = new URL(reference, rootId);
      const base = new URL(rootId);
      return target.href.replace(/#.*$/, "") === base.href.replace(/#.*$/, "") ? target.hash || "#" : null;
    } catch {
      return null;
    }
  };
  const resolve = (reference: string): Node | undefined => {
    const ref = local(reference);
    if (ref === null) return undefined;
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
    // Draft-07's anchors are `$id: "#name"`; any other `$id` below the root is a new base.
    const id = typeof node.$id === "string" ? node.$id : null;
    const inner = underId || (node !== root && id !== null && !id.startsWith("#"));
    if (id?.startsWith("#")) anchors.set(id.slice(1), node);
    if (typeof node.$anchor === "string") anchors.set(node.$anchor, node);
    // Ajv's draft-07 dialect knows `$ref` only: `$dynamicRef` and `$recursiveRef` do nothing.
    if (typeof node.$ref === "string") refs.push([node, node.$ref, inner]);
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
  // By index: a target outside every keyword is visited when first reached, adding its own refs.
  for (let i = 0; i < refs.length; i++) {
    const [node, ref, underId] = refs[i] as [Node, string, boolean];
    const target = underId ? undefined : resolve(ref);
    if (target && !pathOf.has(target)) visit(target, `${ref.slice(0, 100)}`, false);
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
