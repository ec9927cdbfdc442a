import { describe, expect, it } from "vitest";
import { startGateway } from "../support/gateway.ts";
import { expectMatches } from "../support/openapi.ts";
import { seeder } from "../support/seed.ts";

/**
 * What one app can make the gateway do for it is bounded: its endpoints (each event fans out to
 * all of them), and the deliveries an event shows (the rest are paged).
 */
describe("endpoints per app", () => {
  it("stops at ENDPOINTS_PER_APP_MAX, however many are asked for at once, and frees a place on delete", async () => {
    const capped = await startGateway({ ENDPOINTS_PER_APP_MAX: "3" });
    try {
      await capped.request("POST", "/v3/apps", { json: { uid: "shop", name: "Shop" } });
      const create = (i: number) =>
        capped.request("POST", "/v3/endpoints", {
          json: { app: "shop", url: `https://example.com/cap${i}` },
        });
      const made = await Promise.all([0, 1, 2, 3, 4].map(create));
      expect(made.filter((r) => r.status === 201)).toHaveLength(3);
      const refused = made.find((r) => r.status === 400)!;
      expect(refused.body.error).toMatchObject({ code: "endpoint_limit_reached", param: "app" });
      expect(refused.body.error.message).toContain("ENDPOINTS_PER_APP_MAX");
      const one = made.find((r) => r.status === 201)!.body.id;
      expect((await capped.request("DELETE", `/v3/endpoints/${one}`)).status).toBe(200);
      expect((await create(9)).status).toBe(201);
      // Another app has its own places.
      await capped.request("POST", "/v3/apps", { json: { uid: "other", name: "Other" } });
      const other = await capped.request("POST", "/v3/endpoints", {
        json: { app: "other", url: "https://example.com/o" },
      });
      expect(other.status).toBe(201);
    } finally {
      await capped.close();
    }
  });
});

describe("an event's deliveries", () => {
  it("shows the first 100 with the event, and pages through all of them", async () => {
    const wide = await startGateway({ ENDPOINTS_PER_APP_MAX: "200" });
    const wideSeed = seeder(wide.databaseUrl);
    try {
      await wide.request("POST", "/v3/apps", { json: { uid: "wide", name: "Wide" } });
      await wide.request("POST", "/v3/event-types", { json: { name: "wide.sent" } });
      const event = await wide.request("POST", "/v3/events", {
        json: { app: "wide", type: "wide.sent", data: {} },
      });
      const endpoints: string[] = [];
      for (let i = 0; i < 105; i++) {
        const ep = await wide.request("POST", "/v3/endpoints", {
          json: { app: "wide", url: `https://example.com/w${i}` },
        });
        endpoints.push(ep.body.id);
        await wideSeed.delivery({ eventId: event.body.id, endpointId: ep.body.id, status: "succeeded" });
      }
      const shown = await wide.request("GET", `/v3/events/${event.body.id}`);
      expectMatches(shown.body, "Event");
      expect(shown.body.deliveries).toHaveLength(100);
      expect(shown.body.deliveries_has_more).toBe(true);
      const listed = await wide.request("GET", `/v3/events?limit=1`);
      expect(listed.body.data[0]).toMatchObject({ id: event.body.id, deliveries_has_more: true });

      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await wide.request(
          "GET",
          `/v3/events/${event.body.id}/deliveries?limit=40${after ? `&starting_after=${after}` : ""}`,
        );
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((d: { endpoint: string }) => d.endpoint));
        if (!res.body.has_more) break;
        after = res.body.data.at(-1).endpoint;
      }
      expect(seen.sort()).toEqual([...endpoints].sort());
      expect((await wide.request("GET", "/v3/events/evt_nope/deliveries")).status).toBe(404);
    } finally {
      await wideSeed.close();
      await wide.close();
    }
  });
});
