import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, startGateway, type TestGateway } from "../support/gateway.ts";
import { expectList, expectMatches } from "../support/openapi.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe.each(["json", "form"] as const)("accounts and keys with %s bodies", (mode) => {
  const body = (values: Record<string, unknown>) => (mode === "json" ? { json: values } : { form: values });

  it("makes an account with a first key through the operator route", async () => {
    const res = await gw.request("POST", "/admin/accounts", {
      ...body({ name: `Tenant ${mode}` }),
      key: null,
      headers: admin,
    });
    expect(res.status).toBe(201);
    expectMatches(res.body, "AccountWithKey");
    expect(res.body.account).toMatchObject({ object: "account", name: `Tenant ${mode}` });
    expect(res.body.api_key.key).toMatch(/^hk_/);
    // The key works straight away.
    expect((await gw.request("GET", "/v3/apps", { key: res.body.api_key.key })).status).toBe(200);

    const list = await gw.request("GET", "/admin/accounts", { key: null, headers: admin });
    expectList(list.body, "Account");
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(res.body.account.id);
  });

  it("creates, lists and revokes API keys; the secret is shown once", async () => {
    const created = await gw.request("POST", "/v3/api-keys", body({ name: `ci-${mode}` }));
    expect(created.status).toBe(201);
    expectMatches(created.body, "ApiKey");
    const secret = created.body.key as string;
    expect(created.body.prefix).toBe(secret.slice(0, 10));

    const list = await gw.request("GET", "/v3/api-keys");
    expectList(list.body, "ApiKey");
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.id);
    expect(listed).toMatchObject({ name: `ci-${mode}`, revoked_at: null });
    expect(JSON.stringify(list.body)).not.toContain(secret);

    expect((await gw.request("GET", "/v3/apps", { key: secret })).status).toBe(200);
    const revoked = await gw.request("DELETE", `/v3/api-keys/${created.body.id}`);
    expect(revoked.body).toEqual({ id: created.body.id, object: "api_key", deleted: true });
    const after = await gw.request("GET", "/v3/apps", { key: secret });
    expect(after.status).toBe(401);
    expect(after.body.error.type).toBe("authentication_error");
    expect((await gw.request("DELETE", `/v3/api-keys/${created.body.id}`)).status).toBe(404);
  });
});

describe("the operator token", () => {
  it("guards the operator routes, and an account key is not enough", async () => {
    expect((await gw.request("GET", "/admin/accounts", { key: null })).status).toBe(401);
    expect((await gw.request("GET", "/admin/accounts")).status).toBe(401);
    expect(
      (
        await gw.request("POST", "/admin/accounts", {
          key: null,
          headers: { authorization: "Bearer wrong-token-000000" },
          json: { name: "x" },
        })
      ).status,
    ).toBe(401);
  });

  it("stores keys hashed, never in the clear", async () => {
    const created = await gw.request("POST", "/v3/api-keys", { json: {} });
    const row = await gw.gateway.deps.prisma.apiKey.findUniqueOrThrow({ where: { id: created.body.id } });
    expect(JSON.stringify(row)).not.toContain(created.body.key);
    expect(row.hash).toMatch(/^[0-9a-f]{64}$/);
  });
});
