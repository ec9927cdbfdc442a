import type { Node, Violation } from "./budget.ts";
import { type Graph, isNode } from "./references.ts";

/**
 * The expansion limit down the data, not only at its top. Subschemas that apply to a value
 * bring theirs to its children: `{"properties": {"a": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}}`
 * applies 2 at `/a`, 4 at `/a/a`, 2ⁿ n levels down, though no one place in the schema is over
 * the limit. This walks the data the schema describes, one kind of place at a time (a named
 * property, any other property, an array item, a key), with the multiset of subschemas that
 * apply there, until every such multiset has been seen: a recursive schema repeats one, a
 * growing one goes over the limit.
 *
 * Keywords are read as Ajv's draft-07 dialect does (`items` as an array is a tuple, then
 * `additionalItems`; `prefixItems` and `unevaluated*` do nothing). Where which subschemas
 * apply depends on the key, it counts them all: a property may match every `patternProperties`
 * pattern, and one not named in `properties` may match none, so gets `additionalProperties` too.
 */

/** Multisets looked at before a schema is called too intricate to bound. */
const STATES_MAX = 20_000;

type Multiset = Map<Node, number>;
type Place = { subschemas: Multiset; where: string };

const add = (into: Multiset, from: Multiset, times: number) => {
  for (const [node, n] of from) into.set(node, (into.get(node) ?? 0) + n * times);
};
const total = (set: Multiset) => {
  let sum = 0;
  for (const n of set.values()) sum += n;
  return sum;
};

/** Subschemas counted, in all, before a schema is called too intricate to bound. */
const WORK_MAX = 2_000_000;

class TooIntricate extends Error {}
const tooIntricate = (what: string): Violation => ({
  path: "/",
  message: `has more than ${what} to count to bound its cost down the data (schema expansion)`,
});

const nodes = (value: unknown): Node[] =>
  Array.isArray(value) ? value.filter(isNode) : isNode(value) ? [value] : [];

export function deepExpansionProblem(root: Node, { sameAt }: Graph, limit: number): Violation | null {
  let work = 0;
  const closures = new Map<Node, Multiset>();
  /** The subschemas that apply where `node` does, itself included, with how many times each. */
  const closure = (node: Node): Multiset => {
    let known = closures.get(node);
    if (known) return known;
    known = new Map([[node, 1]]);
    // No loops and at most the limit each: expansionProblem has looked already.
    for (const next of sameAt.get(node) ?? []) add(known, closure(next), 1);
    closures.set(node, known);
    return known;
  };
  const ids = new Map<Node, number>();
  const signature = (set: Multiset) =>
    [...set]
      .map(([node, n]) => {
        if (!ids.has(node)) ids.set(node, ids.size);
        return `${ids.get(node)}×${n}`;
      })
      .sort()
      .join(",");

  /** The places one level into the data from where `set` applies, each with what applies there. */
  const children = (set: Multiset, where: string): Place[] => {
    const named = new Map<string, Multiset>();
    const item = new Map<string, Multiset>();
    const otherKey: Multiset = new Map();
    const keyName: Multiset = new Map();
    const into = (places: Map<string, Multiset>, name: string) => {
      const place = places.get(name) ?? new Map<Node, number>();
      places.set(name, place);
      return place;
    };
    const apply = (place: Multiset, schemas: Node[], times: number) => {
      for (const s of schemas) {
        const applied = closure(s);
        work += applied.size;
        if (work > WORK_MAX) throw new TooIntricate();
        add(place, applied, times);
      }
    };
    const names = new Set<string>();
    for (const node of set.keys())
      if (isNode(node.properties)) for (const name of Object.keys(node.properties)) names.add(name);
    for (const [node, times] of set) {
      const properties = isNode(node.properties) ? node.properties : {};
      const patterns = isNode(node.patternProperties)
        ? Object.values(node.patternProperties).flatMap(nodes)
        : [];
      const rest = nodes(node.additionalProperties);
      for (const name of names) {
        const own = Object.hasOwn(properties, name) ? nodes(properties[name]) : null;
        apply(into(named, name), [...(own ?? rest), ...patterns], times);
      }
      apply(otherKey, [...patterns, ...rest], times);
      apply(keyName, nodes(node.propertyNames), times);
      const contains = nodes(node.contains);
      if (Array.isArray(node.items)) {
        node.items.forEach((s, i) => {
          apply(into(item, String(i)), [...nodes(s), ...contains], times);
        });
        apply(into(item, "*"), [...nodes(node.additionalItems), ...contains], times);
      } else apply(into(item, "*"), [...nodes(node.items), ...contains], times);
    }
    const places: Place[] = [];
    for (const [name, subschemas] of named) places.push({ subschemas, where: `${where}/${name}` });
    for (const [index, subschemas] of item) places.push({ subschemas, where: `${where}/${index}` });
    places.push({ subschemas: otherKey, where: `${where}/*` });
    places.push({ subschemas: keyName, where: `${where} (a key)` });
    return places.filter((place) => place.subschemas.size);
  };

  const seen = new Set<string>();
  const todo: Place[] = [{ subschemas: closure(root), where: "" }];
  while (todo.length) {
    const { subschemas, where } = todo.pop() as Place;
    if (total(subschemas) > limit) {
      const shown = where.length > 120 ? `${where.slice(0, 120)}…` : where;
      return {
        path: "/",
        message: `applies more than ${limit} subschemas to one value at ${shown} in the data, $refs followed (schema expansion)`,
      };
    }
    const sig = signature(subschemas);
    if (seen.has(sig)) continue;
    seen.add(sig);
    if (seen.size > STATES_MAX) return tooIntricate(`${STATES_MAX} different places`);
    try {
      todo.push(...children(subschemas, where));
    } catch (err) {
      if (err instanceof TooIntricate) return tooIntricate(`${WORK_MAX} subschemas`);
      throw err;
    }
  }
  return null;
}
