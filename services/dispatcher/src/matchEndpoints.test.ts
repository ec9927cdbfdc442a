import { describe, expect, it } from "vitest";
import { matchEndpoints } from "./matchEndpoints.ts";

const event = (id: string, app_id: string, type: string, data?: unknown) => ({
  id,
  account_id: "acct",
  app_id,
  type,
  data_bytes: null,
  data,
});
const endpoint = (id: string, app_id: string, event_types: string[], filter: unknown = null) => ({
  id,
  app_id,
  url: "u",
  event_types,
  filter,
  fifo: false,
});

describe("matching endpoints to events", () => {
  const endpoints = [
    endpoint("ep_all", "app_a", []),
    endpoint("ep_paid", "app_a", ["invoice.paid"]),
    endpoint("ep_voided", "app_a", ["invoice.voided"]),
    endpoint("ep_other_app", "app_b", []),
  ];
  const pairs = (events: ReturnType<typeof event>[], onlyTo?: Map<string, string>) =>
    matchEndpoints(events, endpoints, onlyTo).map((t) => `${t.event.id}→${t.endpoint.id}`);

  it("gives an event to its app's endpoints that list its type, or list none", () => {
    expect(pairs([event("e1", "app_a", "invoice.paid")])).toEqual(["e1→ep_all", "e1→ep_paid"]);
    expect(pairs([event("e2", "app_a", "invoice.created")])).toEqual(["e2→ep_all"]);
  });

  it("never crosses apps", () => {
    expect(pairs([event("e3", "app_b", "invoice.paid")])).toEqual(["e3→ep_other_app"]);
    expect(pairs([event("e4", "app_c", "invoice.paid")])).toEqual([]);
  });

  it("gives a test event to its one endpoint only, and other events as usual", () => {
    const onlyTo = new Map([["e5", "ep_paid"]]);
    expect(
      pairs([event("e5", "app_a", "invoice.paid"), event("e6", "app_a", "invoice.paid")], onlyTo),
    ).toEqual(["e5→ep_paid", "e6→ep_all", "e6→ep_paid"]);
  });

  it("gives a test event to its one endpoint whatever types that one lists (the gateway chose it)", () => {
    const onlyTo = new Map([["e7", "ep_voided"]]);
    expect(pairs([event("e7", "app_a", "order.placed")], onlyTo)).toEqual(["e7→ep_voided"]);
    // Never across apps, even so.
    expect(pairs([event("e8", "app_b", "order.placed")], new Map([["e8", "ep_voided"]]))).toEqual([]);
  });

  it("gives an event to a filtered endpoint only when its filter matches, after its type", () => {
    const filtered = [
      endpoint("ep_big", "app_a", [], { "data.amount": { $gte: 100 } }),
      endpoint("ep_big_paid", "app_a", ["invoice.paid"], { "data.amount": { $gte: 100 } }),
      endpoint("ep_eur", "app_a", [], { $or: [{ "data.currency": "EUR" }, { type: "invoice.voided" }] }),
      // Stored by an older rule this release no longer compiles: delivered, never lost.
      endpoint("ep_stale", "app_a", [], { "data.amount": { $regex: "1" } }),
    ];
    const got = (e: ReturnType<typeof event>) => matchEndpoints([e], filtered).map((t) => t.endpoint.id);
    expect(got(event("e1", "app_a", "invoice.paid", { amount: 150, currency: "USD" }))).toEqual([
      "ep_big",
      "ep_big_paid",
      "ep_stale",
    ]);
    expect(got(event("e2", "app_a", "invoice.created", { amount: 150, currency: "EUR" }))).toEqual([
      "ep_big",
      "ep_eur",
      "ep_stale",
    ]);
    expect(got(event("e3", "app_a", "invoice.voided", { amount: 5 }))).toEqual(["ep_eur", "ep_stale"]);
    // A test event to a filtered endpoint reaches it, whatever the filter says.
    expect(
      matchEndpoints(
        [event("e4", "app_a", "invoice.paid", { amount: 1 })],
        filtered,
        new Map([["e4", "ep_big"]]),
      ).map((t) => t.endpoint.id),
    ).toEqual(["ep_big"]);
  });
});
