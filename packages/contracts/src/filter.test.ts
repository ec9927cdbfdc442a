import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  Budget,
  compileFilter,
  endpointTakes,
  FILTER_LIMITS,
  FilterError,
  MATCH_BUDGET,
  matchesFilter,
} from "./filter.ts";

const event = {
  id: "evt_1",
  type: "order.created",
  app: "app_1",
  data: {
    amount: 250,
    currency: "EUR",
    customer: { tier: "gold", tags: ["vip", "eu"] },
    items: [
      { sku: "a-1", qty: 2 },
      { sku: "b-2", qty: 1 },
    ],
    note: null,
  },
};

const matches = (filter: unknown) => matchesFilter(compileFilter(filter), event);

describe("endpoint filters", () => {
  it("match by equality, comparison, membership and presence", () => {
    expect(matches({})).toBe(true);
    expect(matches({ type: "order.created" })).toBe(true);
    expect(matches({ type: "order.paid" })).toBe(false);
    expect(matches({ "data.amount": { $gte: 100 } })).toBe(true);
    expect(matches({ "data.amount": { $gt: 100, $lt: 200 } })).toBe(false);
    expect(matches({ "data.currency": { $in: ["USD", "EUR"] } })).toBe(true);
    expect(matches({ "data.currency": { $nin: ["USD", "EUR"] } })).toBe(false);
    expect(matches({ "data.currency": { $ne: "USD" } })).toBe(true);
    expect(matches({ "data.refund": { $exists: false } })).toBe(true);
    expect(matches({ "data.note": { $exists: true } })).toBe(true);
    expect(matches({ "data.note": null })).toBe(true);
    // Strings compare with strings, never with numbers.
    expect(matches({ "data.currency": { $gt: "A" } })).toBe(true);
    expect(matches({ "data.currency": { $gt: 1 } })).toBe(false);
  });

  it("go into objects and arrays, by key, by index and through each item", () => {
    expect(matches({ "data.customer.tier": "gold" })).toBe(true);
    expect(matches({ "data.customer": { tier: "gold", tags: ["vip", "eu"] } })).toBe(true);
    expect(matches({ "data.customer.tags": "vip" })).toBe(true);
    expect(matches({ "data.items.0.sku": "a-1" })).toBe(true);
    expect(matches({ "data.items.1.sku": "a-1" })).toBe(false);
    expect(matches({ "data.items.sku": "b-2" })).toBe(true);
    expect(matches({ "data.items.qty": { $gte: 2 } })).toBe(true);
    expect(matches({ "data.items.qty": { $gt: 2 } })).toBe(false);
  });

  it("treat a missing path as null, as MongoDB does", () => {
    expect(matches({ "data.coupon": null })).toBe(true);
    expect(matches({ "data.coupon": { $ne: null } })).toBe(false);
    expect(matches({ "data.currency": { $ne: null } })).toBe(true);
    expect(matches({ "data.coupon": { $in: [null, "X"] } })).toBe(true);
  });

  it("bound the work one event costs, however hostile the filter and the payload", () => {
    // An array reached both by index and by item, nested: each level would double the work.
    let leaf: unknown = Array.from({ length: 50_000 }, () => ({ "0": 1 }));
    for (let i = 0; i < 7; i++) leaf = [{ "0": leaf }];
    const hostile = compileFilter({
      $or: Array.from({ length: 60 }, () => ({ "data.x.0.0.0.0.0.0.0.0.0.0.0.0.0.0": 2 })),
    });
    const budget = new Budget();
    expect(endpointTakes([], hostile, { id: "e", type: "t", app: "a", data: { x: leaf } }, budget)).toBe(
      "unchecked",
    );
    expect(budget.left).toBeLessThan(0);
    // The budget is the event's: the next filter it meets is not checked either, and costs nothing.
    expect(
      endpointTakes([], compileFilter({ type: "t" }), { id: "e", type: "t", app: "a", data: {} }, budget),
    ).toBe("unchecked");
    // A type the endpoint does not take costs nothing.
    expect(
      endpointTakes(["other"], hostile, { id: "e", type: "t", app: "a", data: { x: leaf } }, budget),
    ).toBe("event_types");
  });

  it("count an object's keys once an event, and charge each, however many values it is compared with", () => {
    // 12 × $in of 100 empty objects over an object of 105,000 keys: 1,200 comparisons with {}.
    const filter = compileFilter({
      $or: Array.from({ length: 12 }, () => ({ data: { $in: Array.from({ length: 100 }, () => ({})) } })),
    });
    const data = Object.fromEntries(Array.from({ length: 105_000 }, (_, i) => [i.toString(36), 0]));
    // Steps alone, not the clock (the keys take tens of ms to list on a busy machine).
    const budget = new Budget(MATCH_BUDGET, 60_000);
    expect(endpointTakes([], filter, { id: "e", type: "t", app: "a", data }, budget)).toBe("filter");
    // The keys once (105,000 steps), each comparison a few: had each counted the keys again,
    // 1,200 × 105,000 steps would be far past the budget.
    const spent = MATCH_BUDGET - budget.left;
    expect(spent).toBeGreaterThanOrEqual(105_000);
    expect(spent).toBeLessThan(115_000);
    // A wider event than the budget: not applied.
    const wider = Object.fromEntries(Array.from({ length: MATCH_BUDGET + 1 }, (_, i) => [i.toString(36), 0]));
    expect(
      endpointTakes(
        [],
        filter,
        { id: "e", type: "t", app: "a", data: wider },
        new Budget(MATCH_BUDGET, 60_000),
      ),
    ).toBe("unchecked");
  });

  it("charge every array item looked through, and long strings by their length", () => {
    const items = Array.from({ length: 50_000 }, (_, i) => i);
    // A key on an array looks into each item, objects or not: 50,000 steps a field, 60 fields.
    const fields = compileFilter({
      $or: Array.from({ length: 60 }, (_, i) => ({ [`data.items.k${i}`]: 1 })),
    });
    const budget0 = new Budget(MATCH_BUDGET, 60_000);
    expect(endpointTakes([], fields, { id: "e", type: "t", app: "a", data: { items } }, budget0)).toBe(
      "unchecked",
    );
    const long = "x".repeat(4000);
    const budget = new Budget(MATCH_BUDGET, 60_000);
    expect(matchesFilter(compileFilter({ "data.s": long }), { data: { s: long } }, budget)).toBe(true);
    expect(MATCH_BUDGET - budget.left).toBeGreaterThan(4000 / 64);
  });

  it("stop at the clock, whatever the steps, and say so", () => {
    const filter = compileFilter({
      $or: Array.from({ length: 60 }, (_, i) => ({ [`data.items.k${i}`]: 1 })),
    });
    const items = Array.from({ length: 20_000 }, (_, i) => ({ [`k${i % 60}`]: 0 }));
    // No time at all: cut at the first look at the clock, with steps left.
    const budget = new Budget(MATCH_BUDGET, 0);
    expect(endpointTakes([], filter, { id: "e", type: "t", app: "a", data: { items } }, budget)).toBe(
      "unchecked",
    );
    // The same work with time to do it is checked.
    expect(
      endpointTakes(
        [],
        filter,
        { id: "e", type: "t", app: "a", data: { items } },
        new Budget(10_000_000, 60_000),
      ),
    ).toBe("filter");
  });

  it("combine with $and, $or and $not", () => {
    expect(matches({ $or: [{ type: "order.paid" }, { "data.amount": { $gt: 200 } }] })).toBe(true);
    expect(matches({ $and: [{ type: "order.created" }, { "data.currency": "USD" }] })).toBe(false);
    expect(matches({ $not: { "data.currency": "USD" } })).toBe(true);
    expect(matches({ "data.amount": { $not: { $gt: 100 } } })).toBe(false);
  });

  it("are refused with the place at fault", () => {
    const fault = (filter: unknown) => {
      try {
        compileFilter(filter);
      } catch (err) {
        expect(err).toBeInstanceOf(FilterError);
        return (err as FilterError).param;
      }
      throw new Error("accepted");
    };
    expect(fault([])).toBe("filter");
    expect(fault({ "data.amount": { $regex: "^1" } })).toBe('filter["data.amount"].$regex');
    expect(fault({ "data.amount": { $gt: {} } })).toBe('filter["data.amount"].$gt');
    expect(fault({ $or: [] })).toBe("filter.$or");
    expect(fault({ $or: [{ a: 1 }, 5] })).toBe("filter.$or[1]");
    expect(fault({ "data..x": 1 })).toBe('filter["data..x"]');
    expect(fault({ a: { $gt: 1, b: 2 } })).toBe("filter.a");
    expect(fault({ a: { $in: Array.from({ length: FILTER_LIMITS.inValues + 1 }, (_, i) => i) } })).toBe(
      "filter.a.$in",
    );
    let deep: unknown = { a: 1 };
    for (let i = 0; i < FILTER_LIMITS.depth; i++) deep = { $not: deep };
    expect(fault(deep)).toMatch(/^filter(\.\$not)+$/);
    expect(fault({ big: "x".repeat(FILTER_LIMITS.size) })).toBe("filter");
    const many = Object.fromEntries(Array.from({ length: FILTER_LIMITS.nodes + 1 }, (_, i) => [`k${i}`, i]));
    expect(fault(many)).toMatch(/^filter\.k\d+$/);
  });

  it("never throw anything but a FilterError when compiled, nor anything when matched", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.jsonValue({ maxDepth: 5 }), (filter, doc) => {
        let compiled: ReturnType<typeof compileFilter>;
        try {
          compiled = compileFilter(filter);
        } catch (err) {
          expect(err).toBeInstanceOf(FilterError);
          return;
        }
        expect(typeof matchesFilter(compiled, doc)).toBe("boolean");
      }),
      { numRuns: 2000 },
    );
  });
});
