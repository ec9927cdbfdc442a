import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { expectList, expectMatches } from "../support/openapi.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw.close());

describe.each(["json", "form"] as const)("apps with %s bodies", (mode) => {
  const send = (method: string, path: string, values: Record<string, unknown>) =>
    gw.request(method, path, mode === "json" ? { json: values } : { form: values });

  it("creates, retrieves by id and by uid, updates, lists and deletes an app", async () => {
    const uid = `cust-${mode}`;
    const created = await send("POST", "/v3/apps", { uid, name: "Acme Corp" });
    expect(created.status).toBe(201);
    expectMatches(created.body, "App");
    expect(created.body).toMatchObject({ object: "app", uid, name: "Acme Corp" });
    expect(created.body.id).toMatch(/^app_[0-9A-Z]{26}$/);
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    expect((await gw.request("GET", `/v3/apps/${created.body.id}`)).body).toEqual(created.body);
    expect((await gw.request("GET", `/v3/apps/${uid}`)).body).toEqual(created.body);

    const updated = await send("POST", `/v3/apps/${uid}`, { name: "Acme Inc" });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, name: "Acme Inc", uid });

    const list = await gw.request("GET", "/v3/apps");
    expectList(list.body, "App");
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(created.body.id);

    const deleted = await gw.request("DELETE", `/v3/apps/${uid}`);
    expect(deleted.body).toEqual({ id: created.body.id, object: "app", deleted: true });
    expect((await gw.request("GET", `/v3/apps/${created.body.id}`)).status).toBe(404);
  });

  it("creates an app without a uid", async () => {
    const created = await send("POST", "/v3/apps", { name: "No uid" });
    expect(created.status).toBe(201);
    expect(created.body.uid).toBeNull();
  });
});

describe("app rules", () => {
  it("refuses a duplicate uid in the same account with a 409", async () => {
    expect((await gw.request("POST", "/v3/apps", { json: { uid: "dup", name: "A" } })).status).toBe(201);
    const again = await gw.request("POST", "/v3/apps", { json: { uid: "dup", name: "B" } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: "resource_exists", param: "uid" });
  });

  it("refuses uids that could be mistaken for ids or break the character rules", async () => {
    for (const uid of ["app_123", "has space", "slash/no", "x".repeat(257)]) {
      const res = await gw.request("POST", "/v3/apps", { json: { uid, name: "A" } });
      expect(res.status, uid).toBe(400);
      expect(res.body.error.param).toBe("uid");
    }
  });

  it("requires a name of 1 to 256 characters", async () => {
    expect((await gw.request("POST", "/v3/apps", { json: { name: "" } })).body.error.param).toBe("name");
    expect((await gw.request("POST", "/v3/apps", { json: { name: "n".repeat(257) } })).body.error.param).toBe(
      "name",
    );
    expect((await gw.request("POST", "/v3/apps", { json: { name: "n".repeat(256) } })).status).toBe(201);
  });
});
