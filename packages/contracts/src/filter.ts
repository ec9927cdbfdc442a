/**
 * Endpoint filters: a MongoDB-style query over an event, `{ "type": "order.created",
 * "data.amount": { "$gte": 100 } }`, keyed by dotted paths from the event's top (`id`, `type`,
 * `app`, `data`). The gateway compiles a filter when an endpoint is saved (a FilterError names
 * the part at fault); the dispatcher compiles it again at fan-out and matches each event.
 *
 * - A field's condition is a value (equal to it, or an array holding it) or operators: `$eq`,
 *   `$ne`, `$in`, `$nin`, `$gt`, `$gte`, `$lt`, `$lte` (numbers with numbers, strings with
 *   strings), `$exists`, and `$not` over operators. Several operators on one field must all hold.
 * - `$and` and `$or` take lists of filters, `$not` a filter.
 * - A path goes into objects by key and into arrays by index (`items.0.sku`); a key on an array
 *   looks into each of its objects (`items.sku`: any item's).
 *
 * Bounded so that no filter costs much to keep or to run: FILTER_LIMITS. There is no `$regex`
 * and nothing else whose cost grows with the pattern.
 */
export const FILTER_LIMITS = {
  /** The filter as JSON, in characters. */
  size: 4096,
  /** Objects within objects. */
  depth: 6,
  /** Conditions and logical operators, in all. */
  nodes: 64,
  /** Values in one `$in` or `$nin`. */
  inValues: 100,
  /** Segments in a path. */
  segments: 16,
} as const;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

type Cond =
  | { op: "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte"; value: Json }
  | { op: "$in" | "$nin"; values: Json[] }
  | { op: "$exists"; value: boolean }
  | { op: "$not"; conds: Cond[] };

export type CompiledFilter =
  | { kind: "and" | "or"; filters: CompiledFilter[] }
  | { kind: "not"; filter: CompiledFilter }
  | { kind: "field"; path: string[]; conds: Cond[] };

const FIELD_OPERATORS = ["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists", "$not"];

/** What is wrong with a filter, and where: `param` as the API's errors name it (`filter["data.amount"].$gte`). */
export class FilterError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

const at = (path: string, key: string | number) =>
  typeof key === "number"
    ? `${path}[${key}]`
    : /^[A-Za-z_$][\w$]*$/.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

class Compiler {
  nodes = 0;

  count(path: string): void {
    if (++this.nodes > FILTER_LIMITS.nodes)
      throw new FilterError(path, `A filter holds at most ${FILTER_LIMITS.nodes} conditions and operators.`);
  }

  filter(value: unknown, path: string, depth: number): CompiledFilter {
    if (!isPlainObject(value))
      throw new FilterError(path, 'A filter is an object: { "path": condition, … }.');
    if (depth > FILTER_LIMITS.depth)
      throw new FilterError(path, `A filter nests at most ${FILTER_LIMITS.depth} objects deep.`);
    const filters = Object.entries(value).map(([key, v]) => this.entry(key, v, at(path, key), depth));
    return filters.length === 1 ? filters[0]! : { kind: "and", filters };
  }

  private entry(key: string, value: unknown, path: string, depth: number): CompiledFilter {
    this.count(path);
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(value) || value.length === 0)
        throw new FilterError(path, `${key} takes a non-empty list of filters.`);
      return {
        kind: key === "$and" ? "and" : "or",
        filters: value.map((f, i) => this.filter(f, at(path, i), depth + 1)),
      };
    }
    if (key === "$not") return { kind: "not", filter: this.filter(value, path, depth + 1) };
    if (key.startsWith("$"))
      throw new FilterError(
        path,
        `Unknown operator ${key} here: at the top of a filter, $and, $or and $not.`,
      );
    const segments = key.split(".");
    if (segments.length > FILTER_LIMITS.segments || segments.some((s) => s === ""))
      throw new FilterError(
        path,
        `A path is 1 to ${FILTER_LIMITS.segments} non-empty keys or indexes joined by dots, like data.items.0.sku.`,
      );
    return { kind: "field", path: segments, conds: this.condition(value, path, depth + 1) };
  }

  private condition(value: unknown, path: string, depth: number): Cond[] {
    if (depth > FILTER_LIMITS.depth)
      throw new FilterError(path, `A filter nests at most ${FILTER_LIMITS.depth} objects deep.`);
    const keys = isPlainObject(value) ? Object.keys(value) : [];
    const operators = keys.filter((k) => k.startsWith("$"));
    // A value, or an object without operators: the field equals it.
    if (operators.length === 0) return [{ op: "$eq", value: value as Json }];
    if (operators.length !== keys.length)
      throw new FilterError(path, "A condition is either operators ($gt, …) or a value to equal, not both.");
    return Object.entries(value as Record<string, unknown>).map(([op, v]) =>
      this.operator(op, v, at(path, op), depth),
    );
  }

  private operator(op: string, value: unknown, path: string, depth: number): Cond {
    this.count(path);
    switch (op) {
      case "$eq":
      case "$ne":
        return { op, value: value as Json };
      case "$gt":
      case "$gte":
      case "$lt":
      case "$lte":
        if (typeof value !== "number" && typeof value !== "string")
          throw new FilterError(path, `${op} compares with a number or a string.`);
        return { op, value };
      case "$in":
      case "$nin":
        if (!Array.isArray(value) || value.length > FILTER_LIMITS.inValues)
          throw new FilterError(path, `${op} takes a list of at most ${FILTER_LIMITS.inValues} values.`);
        return { op, values: value as Json[] };
      case "$exists":
        if (typeof value !== "boolean") throw new FilterError(path, "$exists takes true or false.");
        return { op, value };
      case "$not":
        if (!isPlainObject(value) || !Object.keys(value).every((k) => k.startsWith("$")))
          throw new FilterError(path, '$not on a field takes operators, e.g. { "$not": { "$gt": 5 } }.');
        return { op, conds: this.condition(value, path, depth + 1) };
      default:
        throw new FilterError(
          path,
          `Unknown operator ${op}: the operators are ${FIELD_OPERATORS.join(", ")}.`,
        );
    }
  }
}

/**
 * Checks and compiles a filter; `param` names it in errors (`filter`). Throws a FilterError
 * naming the part at fault.
 */
export function compileFilter(value: unknown, param = "filter"): CompiledFilter {
  let size: number;
  try {
    size = JSON.stringify(value).length;
  } catch {
    throw new FilterError(param, "A filter is JSON.");
  }
  if (size > FILTER_LIMITS.size)
    throw new FilterError(param, `A filter is at most ${FILTER_LIMITS.size} characters as JSON.`);
  return new Compiler().filter(value, param, 1);
}

/**
 * The work matching may do for one event, in steps, shared by every filter the event meets: a
 * step is a value visited or compared, an array item looked through, an object key enumerated.
 * A hostile filter over a hostile payload costs this much and no more. Past it, or past
 * MATCH_TIME_MS of the clock (a loaded machine), the filter is not applied (`endpointTakes`
 * says "unchecked").
 */
export const MATCH_BUDGET = 200_000;
/** The time one event's matching may take, whatever its steps: checked every few thousand steps. */
export const MATCH_TIME_MS = 50;
const CLOCK_EVERY = 4096;

const SPENT = new Error("the filter budget is spent");

export class Budget {
  private readonly deadline: number;
  private sinceClock = 0;
  /** Keys of the event's objects, counted once each: a filter compares many values with one object. */
  private readonly keyCounts = new WeakMap<object, number>();

  constructor(
    public left: number = MATCH_BUDGET,
    timeMs: number = MATCH_TIME_MS,
  ) {
    this.deadline = performance.now() + timeMs;
  }

  spend(steps = 1): void {
    this.left -= steps;
    if (this.left < 0) throw SPENT;
    this.sinceClock += steps;
    if (this.sinceClock >= CLOCK_EVERY) {
      this.sinceClock = 0;
      if (performance.now() > this.deadline) {
        this.left = -1;
        throw SPENT;
      }
    }
  }

  /** How many keys `object` has: enumerated once an event, and charged a step a key. */
  keyCount(object: object): number {
    let count = this.keyCounts.get(object);
    if (count === undefined) {
      count = Object.keys(object).length;
      this.keyCounts.set(object, count);
      this.spend(count);
    }
    return count;
  }
}

/**
 * The values at `path` in `value`: none when it is absent; several through an array of objects.
 * Each (object, segment) is visited once, so an array reached both by index and by item does
 * not double the work at each level.
 */
function resolve(
  value: unknown,
  path: string[],
  i: number,
  out: unknown[],
  budget: Budget,
  seen: Map<object, Set<number>>,
): void {
  budget.spend();
  if (i === path.length) {
    out.push(value);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  let at = seen.get(value);
  if (!at) {
    at = new Set();
    seen.set(value, at);
  }
  if (at.has(i)) return;
  at.add(i);
  const key = path[i]!;
  if (Array.isArray(value)) {
    // Every item is looked at, objects or not.
    budget.spend(value.length);
    if (/^\d+$/.test(key) && Number(key) < value.length)
      resolve(value[Number(key)], path, i + 1, out, budget, seen);
    for (const item of value) if (isPlainObject(item)) resolve(item, path, i, out, budget, seen);
    return;
  }
  if (Object.hasOwn(value, key))
    resolve((value as Record<string, unknown>)[key], path, i + 1, out, budget, seen);
}

/** Steps for comparing two values: strings are compared a character at a time, 64 to a step. */
const comparing = (a: unknown, b: unknown) =>
  typeof a === "string" && typeof b === "string" ? 1 + (Math.min(a.length, b.length) >> 6) : 1;

function equal(a: unknown, b: unknown, budget: Budget): boolean {
  budget.spend(comparing(a, b));
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => equal(x, b[i], budget));
  if (isPlainObject(a) && isPlainObject(b)) {
    // `b` is the filter's, small: its keys are looked up in `a`; `a`'s are only counted, once.
    const keys = Object.keys(b);
    budget.spend(keys.length);
    return (
      keys.every((k) => Object.hasOwn(a, k)) &&
      budget.keyCount(a) === keys.length &&
      keys.every((k) => equal(a[k], b[k], budget))
    );
  }
  return false;
}

/** A value, or an array holding it: as MongoDB matches a field. */
const holds = (found: unknown, want: Json, budget: Budget) =>
  equal(found, want, budget) || (Array.isArray(found) && found.some((x) => equal(x, want, budget)));

function compare(
  found: unknown,
  op: "$gt" | "$gte" | "$lt" | "$lte",
  want: number | string,
  budget: Budget,
): boolean {
  const values = Array.isArray(found) ? found : [found];
  return values.some((v) => {
    budget.spend(comparing(v, want));
    if (typeof v !== typeof want) return false;
    const a = v as number | string;
    return op === "$gt" ? a > want : op === "$gte" ? a >= want : op === "$lt" ? a < want : a <= want;
  });
}

/** Equal to one of `values`; as in MongoDB, a null among them also matches a path that is absent. */
const isAny = (found: unknown[], values: Json[], budget: Budget) =>
  (found.length === 0 && values.includes(null)) || found.some((f) => values.some((v) => holds(f, v, budget)));

function test(found: unknown[], cond: Cond, budget: Budget): boolean {
  switch (cond.op) {
    case "$eq":
      return isAny(found, [cond.value], budget);
    case "$ne":
      return !isAny(found, [cond.value], budget);
    case "$in":
      return isAny(found, cond.values, budget);
    case "$nin":
      return !isAny(found, cond.values, budget);
    case "$exists":
      return found.length > 0 === cond.value;
    case "$not":
      return !cond.conds.every((c) => test(found, c, budget));
    default:
      return found.some((f) =>
        compare(f, cond.op as "$gt" | "$gte" | "$lt" | "$lte", cond.value as number | string, budget),
      );
  }
}

/**
 * Whether the event (`{ id, type, app, data }`) passes the filter, within `budget` (throws the
 * budget's error past it: `endpointTakes` catches it).
 */
export function matchesFilter(
  filter: CompiledFilter,
  event: unknown,
  budget: Budget = new Budget(),
): boolean {
  switch (filter.kind) {
    case "and":
      return filter.filters.every((f) => matchesFilter(f, event, budget));
    case "or":
      return filter.filters.some((f) => matchesFilter(f, event, budget));
    case "not":
      return !matchesFilter(filter.filter, event, budget);
    default: {
      const found: unknown[] = [];
      resolve(event, filter.path, 0, found, budget, new Map());
      return filter.conds.every((c) => test(found, c, budget));
    }
  }
}

/**
 * Whether an endpoint takes an event: its `event_types` list the type (or list none), then its
 * filter, if any, matches `{ id, type, app, data }`. "unchecked": the event's budget (shared by
 * the filters it meets) ran out on this filter, which is then not applied: the endpoint takes
 * it. The dispatcher's fan-out and the gateway's dry run both ask this.
 */
export function endpointTakes(
  eventTypes: readonly string[],
  filter: CompiledFilter | null | undefined,
  event: { id: string; type: string; app: string; data: unknown },
  budget: Budget = new Budget(),
): "yes" | "unchecked" | "event_types" | "filter" {
  if (eventTypes.length > 0 && !eventTypes.includes(event.type)) return "event_types";
  if (!filter) return "yes";
  try {
    return matchesFilter(filter, event, budget) ? "yes" : "filter";
  } catch (err) {
    if (err === SPENT) return "unchecked";
    throw err;
  }
}

/**
 * A filter as stored, compiled for matching: null for none. The gateway stores only filters it
 * compiled; one a newer release no longer would is not applied (null): the event is delivered
 * rather than lost.
 */
export function storedFilter(filter: unknown): CompiledFilter | null {
  if (filter === null || filter === undefined) return null;
  try {
    return compileFilter(filter);
  } catch {
    return null;
  }
}
