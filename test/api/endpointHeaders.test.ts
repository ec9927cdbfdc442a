import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  openHeaders,
  sealLegacyHeaders,
} from "../../services/api-gateway/src/resources/endpoints/headers.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { type Seeder, seeder } from "../support/seed.ts";

/**
 * An endpoint's custom header values are write-only: sealed at rest, shown as [redacted], in
 * old rows and old attempts too, and sent only to the origin they were set for.
 */
let gw: TestGateway;
let seed: Seeder;
beforeAll(async () => {
  gw = await startGateway();
  seed = seeder(gw.databaseUrl);
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid" } });
});
afterAll(async () => {
  await seed.close();
  await gw.close();
});

describe("custom headers stored before they were sealed", () => {
  it("are sealed at the gateway's start, the values kept and shown no more", async () => {
    const id = (
      await gw.request("POST", "/v3/endpoints", { json: { app: "acme", url: "https://example.com/legacy" } })
    ).body.id as string;
    const db = new pg.Client({ connectionString: gw.databaseUrl });
    await db.connect();
    try {
      // As a row written before: the values in `headers`, nothing sealed.
      await db.query(
        `UPDATE endpoints SET headers = '{"X-Api-Key":"legacy-key-1"}', headers_sealed = NULL WHERE id = $1`,
        [id],
      );
      await sealLegacyHeaders(gw.gateway.deps.prisma, gw.gateway.deps.secrets, gw.gateway.deps.logger);
      const { rows } = await db.query("SELECT headers, headers_sealed FROM endpoints WHERE id = $1", [id]);
      expect(rows[0].headers).toEqual({ "X-Api-Key": "" });
      expect(rows[0].headers_sealed).toMatch(/^v2\./);
      expect(JSON.stringify(rows[0])).not.toContain("legacy-key-1");
      const opened = openHeaders(gw.gateway.deps.secrets, {
        id,
        headers: rows[0].headers,
        headersSealed: rows[0].headers_sealed,
      });
      expect(opened).toEqual({ "X-Api-Key": "legacy-key-1" });
      expect((await gw.request("GET", `/v3/endpoints/${id}`)).body.headers).toEqual({
        "X-Api-Key": "[redacted]",
      });
    } finally {
      await db.end();
    }
  });
});

describe("an attempt recorded before custom header values were write-only", () => {
  it("shows the endpoint's own headers as [redacted]", async () => {
    const ep = (
      await gw.request("POST", "/v3/endpoints", {
        json: { app: "acme", url: "https://example.com/old-attempt", headers: { "X-Tenant": "acme-co" } },
      })
    ).body.id as string;
    const event = await gw.request("POST", "/v3/events", {
      json: { app: "acme", type: "invoice.paid", data: {} },
    });
    const delivery = await seed.delivery({ eventId: event.body.id, endpointId: ep, status: "succeeded" });
    const attemptId = await seed.attempt({ deliveryId: delivery, status: "succeeded", attemptNumber: 1 });
    // As an older sender recorded it: the value in clear.
    await gw.gateway.deps.prisma.attempt.updateMany({
      where: { id: attemptId },
      data: { requestHeaders: { "X-Tenant": "acme-co", "webhook-id": event.body.id } },
    });
    const shown = await gw.request("GET", `/v3/attempts/${attemptId}`);
    expect(shown.body.request.headers).toEqual({ "X-Tenant": "[redacted]", "webhook-id": event.body.id });
  });
});

describe("saved custom header values and a new URL", () => {
  it("go to another path of the same origin, but another origin needs them sent again", async () => {
    const ep = (
      await gw.request("POST", "/v3/endpoints", {
        json: { app: "acme", url: "https://hooks.example.com/a", headers: { "X-Api-Key": "k1" } },
      })
    ).body.id as string;
    const move = (json: object) => gw.request("POST", `/v3/endpoints/${ep}`, { json });
    expect((await move({ url: "https://hooks.example.com/b" })).status).toBe(200);
    const away = await move({ url: "https://attacker.example.net/collect" });
    expect(away.status).toBe(400);
    expect(away.body.error.param).toBe("headers");
    const redacted = await move({
      url: "https://attacker.example.net/collect",
      headers: { "X-Api-Key": "[redacted]" },
    });
    expect(redacted.body.error.param).toBe("headers[X-Api-Key]");
    const resent = await move({ url: "https://new.example.net/hook", headers: { "X-Api-Key": "k2" } });
    expect(resent.status).toBe(200);
    expect(resent.body.url).toBe("https://new.example.net/hook");
  });
});
