import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAuth } from "../../services/api-gateway/src/resources/endpoints/auth.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * Endpoints whose URL names a destination beyond HTTP: each type's URL checked, the URL's
 * credentials sealed and shown as [redacted], and kept only on the destination they were set for.
 */
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
});
afterAll(() => gw.close());

const create = (url: string, extra: object = {}) =>
  gw.request("POST", "/v3/endpoints", { json: { app: "acme", url, ...extra } });

/** What is stored of the endpoint: its row's text, and its sealed document opened. */
async function stored(id: string) {
  const db = new pg.Client({ connectionString: gw.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query("SELECT * FROM endpoints WHERE id = $1", [id]);
    const row = rows[0];
    return {
      text: JSON.stringify(row),
      auth: openAuth(gw.gateway.deps.secrets, { id, authSealed: row.auth_sealed }),
    };
  } finally {
    await db.end();
  }
}

describe("a destination URL", () => {
  it.each([
    "amqp://rabbit.example.com/?exchange=orders&routing_key=invoice.paid",
    "nats://nats.example.com?subject=orders.paid",
    "redis://redis.example.com/0?stream=orders&maxlen=10000",
    "mqtt://mqtt.example.com?topic=herald/orders&qos=1",
    "s3://herald-events/acme/?region=eu-west-1",
  ])("is taken as %s", async (url) => {
    const res = await create(url);
    expect(res.status).toBe(201);
    expect(res.body.url).toBe(new URL(url).href);
  });

  it.each([
    ["amqp://rabbit.example.com/", /exchange/],
    ["nats://n.example.com?subject=orders.>", /wildcards/],
    ["redis://r.example.com?stream=s&maxlen=-1", /maxlen/],
    ["mqtt://m.example.com?topic=a&qos=0", /qos/],
    ["s3://Not_A_Bucket", /bucket/],
    ["ftp://files.example.com/in", /must use one of/],
    ["amqp://us%ZZer:pw@h.example.com/?exchange=x", /malformed percent-escape/],
    ["s3://bucket/a%2F..%2Fother?endpoint=http://s3.example.com", /\.\. segments/],
  ])("is refused when it would not deliver: %s", async (url, message) => {
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("url");
    expect(res.body.error.message).toMatch(message);
  });

  it("keeps HTTP's own authentication for http endpoints", async () => {
    const res = await create("amqp://h.example.com/?exchange=x", {
      oauth2: { token_url: "https://auth.example.com/token", client_id: "c", client_secret: "s" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("oauth2");
  });
});

describe("a destination's credentials", () => {
  it("are sealed at rest and shown as [redacted], in the endpoint and its list", async () => {
    const res = await create("amqp://herald:s3cr3t-pw@rabbit.example.com:5672/prod?exchange=orders");
    expect(res.status).toBe(201);
    expect(res.body.url).toBe("amqp://[redacted]@rabbit.example.com:5672/prod?exchange=orders");
    const id = res.body.id as string;
    const { text, auth } = await stored(id);
    expect(text).not.toContain("s3cr3t-pw");
    expect(auth.url_credentials).toEqual({ username: "herald", password: "s3cr3t-pw" });
    const listed = await gw.request("GET", "/v3/endpoints?app=acme&limit=100");
    expect(JSON.stringify(listed.body)).not.toContain("s3cr3t-pw");
  });

  it("are kept when the URL comes back as shown, on the same destination", async () => {
    const id = (await create("redis://default:pw-one@redis.example.com/0?stream=a")).body.id as string;
    const res = await gw.request("POST", `/v3/endpoints/${id}`, {
      json: { url: "redis://[redacted]@redis.example.com/0?stream=b" },
    });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe("redis://[redacted]@redis.example.com/0?stream=b");
    expect((await stored(id)).auth.url_credentials).toEqual({ username: "default", password: "pw-one" });
  });

  it("must be sent again for another host, and go when a URL has none", async () => {
    const id = (await create("mqtt://u:pw-two@mqtt.example.com?topic=t")).body.id as string;
    const moved = await gw.request("POST", `/v3/endpoints/${id}`, {
      json: { url: "mqtt://[redacted]@attacker.example.com?topic=t" },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.error.param).toBe("url");
    expect(moved.body.error.message).toMatch(/credentials again/);
    expect((await stored(id)).auth.url_credentials).toEqual({ username: "u", password: "pw-two" });

    const resent = await gw.request("POST", `/v3/endpoints/${id}`, {
      json: { url: "mqtt://v:pw-three@other.example.com?topic=t" },
    });
    expect(resent.status).toBe(200);
    expect((await stored(id)).auth.url_credentials).toEqual({ username: "v", password: "pw-three" });

    const none = await gw.request("POST", `/v3/endpoints/${id}`, {
      json: { url: "mqtt://other.example.com?topic=t" },
    });
    expect(none.status).toBe(200);
    expect((await stored(id)).auth.url_credentials).toBeUndefined();
  });

  it("cannot be claimed by a new endpoint with [redacted]", async () => {
    const res = await create("amqp://[redacted]@rabbit.example.com/?exchange=x");
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe("url");
  });
});

describe("DESTINATION_TYPES", () => {
  it("refuses endpoints of the types an installation turned off, naming the setting", async () => {
    const only = await startGateway({ DESTINATION_TYPES: "http,s3" });
    try {
      await only.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
      const refused = await only.request("POST", "/v3/endpoints", {
        json: { app: "acme", url: "amqp://rabbit.example.com/?exchange=x" },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error.param).toBe("url");
      expect(refused.body.error.message).toMatch(
        /does not deliver to amqp endpoints \(DESTINATION_TYPES: http, s3\)/,
      );
      const taken = await only.request("POST", "/v3/endpoints", {
        json: { app: "acme", url: "s3://herald-events/?region=eu-west-1" },
      });
      expect(taken.status).toBe(201);
    } finally {
      await only.close();
    }
  });
});
