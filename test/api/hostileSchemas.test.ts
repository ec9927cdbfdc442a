import { monitorEventLoopDelay } from "node:perf_hooks";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";

/**
 * Schemas and payloads written to stall the gateway, each of which did: the gateway runs in
 * this process, so its event loop is this test's, and its delay is measured while they run.
 */
let gw: TestGateway;
let otherKey: string;
const loop = monitorEventLoopDelay({ resolution: 10 });
beforeAll(async () => {
  // Budgets well past what the fair cases take on a loaded 2-core machine (a clean clone's run
  // saw the 901-branch schema's compile pass 2 s, and the 20,001 objects pass 300 ms), and well
  // short of what the hostile ones would: 20,000 items of 901 branches take seconds.
  gw = await startGateway({ SCHEMA_VALIDATE_TIMEOUT: "1s", SCHEMA_COMPILE_TIMEOUT: "10s" });
  otherKey = await gw.newAccount("Neighbour");
  for (const key of [gw.key, otherKey])
    await gw.request("POST", "/v3/apps", { key, json: { uid: "acme", name: "Acme" } });
  await gw.request("POST", "/v3/event-types", {
    key: otherKey,
    json: { name: "plain.sent", schema: { type: "object", required: ["id"] } },
  });
  loop.enable();
});
afterAll(async () => {
  loop.disable();
  await gw.close();
});

const createType = (name: string, schema: unknown) =>
  gw.request("POST", "/v3/event-types", { json: { name, schema } });
const send = (type: string, data: unknown, key = gw.key) =>
  gw.request("POST", "/v3/events", { key, json: { app: "acme", type, data } });

/** The longest the event loop was held while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  loop.reset();
  const result = await work();
  return { result, stallMs: loop.max / 1e6 };
}

/** 22 levels of `oneOf: [$ref, $ref]` down to a string: 4 million checks of one value. */
function doublingDefs(levels: number): Record<string, unknown> {
  const defs: Record<string, unknown> = { [`a${levels}`]: { type: "string" } };
  for (let i = 0; i < levels; i++)
    defs[`a${i}`] = { oneOf: [{ $ref: `#/$defs/a${i + 1}` }, { $ref: `#/$defs/a${i + 1}` }] };
  return defs;
}

describe("a hostile schema or payload", () => {
  it("a backtracking pattern checks a 35-character attack, and a 100,000-character one, at once", async () => {
    const schema = { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } };
    expect((await createType("regex.evil", schema)).status).toBe(201);
    for (const length of [35, 100_000]) {
      const { result, stallMs } = await longestStall(() =>
        send("regex.evil", { s: `${"a".repeat(length)}!` }),
      );
      expect(result.status).toBe(422);
      expect(result.body.error).toMatchObject({ code: "schema_validation_failed", param: "data" });
      expect(stallMs).toBeLessThan(1000);
    }
    expect((await send("regex.evil", { s: "aaaa" })).status).toBe(201);
  });

  it("a pattern only a backtracking engine can run is refused when the type is made", async () => {
    const res = await createType("regex.backref", { type: "string", pattern: "^(a)\\1$" });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_schema", param: "schema" });
    expect(res.body.error.message).toMatch(/pattern "\^\(a\)\\\\1\$" is not supported.*RE2/);
  });

  it("a 100-byte schema whose example would be 1000⁸ values is refused, naming the limit", async () => {
    const schema = {
      $defs: { a: { type: "array", minItems: 1000, items: { $ref: "#/$defs/a" } } },
      $ref: "#/$defs/a",
    };
    const { result, stallMs } = await longestStall(() => createType("example.huge", schema));
    expect(result.status).toBe(400);
    expect(result.body.error.message).toContain("example size");
    expect(stallMs).toBeLessThan(1000);
    const checked = await gw.request("POST", "/v3/json-schema/validate", { json: { schema } });
    expect(checked.body).toMatchObject({ valid: false, example: null });
  });

  it("a type stored before the budgets still lists, with no example", async () => {
    const db = new pg.Client({ connectionString: gw.databaseUrl });
    await db.connect();
    try {
      const schema = {
        type: "array",
        minItems: 100_000_000,
        items: { type: "string", minLength: 100_000_000 },
      };
      await db.query(
        `INSERT INTO event_types (id, account_id, name, description, schema, created_at, updated_at)
         SELECT 'evtt_legacy0000000000000000', account_id, 'legacy.huge', '', $1, now(), now()
           FROM event_types WHERE name = 'regex.evil'`,
        [JSON.stringify(schema)],
      );
    } finally {
      await db.end();
    }
    const { result, stallMs } = await longestStall(() => gw.request("GET", "/v3/event-types?limit=100"));
    expect(result.status).toBe(200);
    expect(result.body.data.find((t: { name: string }) => t.name === "legacy.huge")).toMatchObject({
      example: null,
    });
    expect(stallMs).toBeLessThan(1000);
  });

  it("a $ref 15,000 characters long, used 499 times in an example, is walked once", async () => {
    const slashes = "/".repeat(15_000);
    const schema = {
      $defs: { [slashes]: { type: "string" } },
      type: "array",
      minItems: 499,
      items: { $ref: `#/$defs/${"~1".repeat(15_000)}` },
    };
    for (let i = 0; i < 12; i++) expect((await createType(`long.ref${i}`, schema)).status).toBe(201);
    const { result, stallMs } = await longestStall(() => gw.request("GET", "/v3/event-types?limit=100"));
    const listed = result.body.data.filter((t: { name: string }) => t.name.startsWith("long.ref"));
    expect(listed.map((t: { example: string[] }) => t.example.length)).toEqual(Array(12).fill(499));
    expect(stallMs).toBeLessThan(1000);
  });

  it.each([
    ["schema size", { type: "object", description: "x".repeat(70_000) }, "/"],
    [
      "schema depth",
      JSON.parse(`${'{"not":'.repeat(40)}{}${"}".repeat(40)}`),
      expect.stringMatching(/^\/not/),
    ],
    ["schema expansion", { $defs: doublingDefs(22), $ref: "#/$defs/a0" }, "/"],
  ])("a schema over its %s is refused, naming the limit", async (limit, schema, path) => {
    const { result, stallMs } = await longestStall(() =>
      createType(`over.${limit.replace(" ", "_")}`, schema),
    );
    expect(result.status).toBe(400);
    expect(result.body.error.details).toEqual([{ path, message: expect.stringContaining(`(${limit})`) }]);
    expect(stallMs).toBeLessThan(1000);
  });

  it("a $ref that leads back to itself without entering the data is refused where it is", async () => {
    const res = await createType("ref.loop", {
      $defs: { a: { anyOf: [{ $ref: "#/$defs/a" }, { type: "string" }] } },
      $ref: "#/$defs/a",
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([
      { path: "/$defs/a", message: expect.stringContaining("never end") },
    ]);
  });

  it("a schema whose subschemas double at each level of the data is refused, naming the level", async () => {
    // At no one place are there more than 3, but 2ⁿ apply n levels down: 2⁴⁰ at the 40 the body allows.
    const { result, stallMs } = await longestStall(() =>
      createType("doubling.sent", {
        $defs: {
          n: { allOf: [{ $ref: "#/$defs/m" }, { $ref: "#/$defs/m" }] },
          m: { type: "object", properties: { c: { $ref: "#/$defs/n" } } },
        },
        $ref: "#/$defs/n",
      }),
    );
    expect(result.status).toBe(400);
    expect(result.body.error.details).toEqual([
      { path: "/", message: expect.stringMatching(/ at \/c\/c\/c.* in the data.*\(schema expansion\)/) },
    ]);
    expect(stallMs).toBeLessThan(1000);
  });

  it.each([
    ["another document", { $ref: "https://example.com/other.json" }, "/"],
    [
      "a subschema's own $id, which the count could not follow",
      {
        $defs: {
          d1: { $id: "http://e/d1", anyOf: [{ $ref: "http://e/d2" }, { $ref: "http://e/d2" }] },
          d2: { $id: "http://e/d2", type: "string" },
        },
        $ref: "#/$defs/d1",
      },
      "/$defs/d1/anyOf/0",
    ],
    ["a pointer that is not percent-encoded right", { $ref: "#/%E0" }, "/"],
  ])("a $ref to %s is refused where it is", async (_what, schema, path) => {
    const res = await createType("ref.elsewhere", schema);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "invalid_schema", param: "schema" });
    expect(res.body.error.details).toEqual([{ path, message: expect.stringContaining("refer") }]);
  });

  it("data too long to check in time is stopped at SCHEMA_VALIDATE_TIMEOUT; others' events go on", async () => {
    // 901 branches, tried in turn on each item: quick for a few items, seconds for 20,000.
    const branches = Array.from({ length: 900 }, (_, i) => ({ type: "string", minLength: i }));
    const schema = {
      type: "object",
      properties: { items: { type: "array", items: { anyOf: [...branches, { type: "number" }] } } },
    };
    expect((await createType("wide.sent", schema)).status).toBe(201);
    expect((await send("wide.sent", { items: [1, 2, 3] })).status).toBe(201);
    const slow = send("wide.sent", { items: Array.from({ length: 20_000 }, () => 0) });
    const neighbour = await send("plain.sent", { id: "n1" }, otherKey);
    expect(neighbour.status).toBe(201);
    const { result, stallMs } = await longestStall(() => slow);
    expect(result.status).toBe(422);
    expect(result.body.error).toMatchObject({ code: "schema_too_costly", param: "data" });
    expect(result.body.error.message).toContain("SCHEMA_VALIDATE_TIMEOUT");
    expect(stallMs).toBeLessThan(1000);
  });

  it("an unknown format's name, however long or forged, never reaches the console", async () => {
    const writes = [
      vi.spyOn(process.stderr, "write"),
      vi.spyOn(process.stdout, "write"),
      vi.spyOn(console, "warn"),
      vi.spyOn(console, "error"),
      vi.spyOn(console, "log"),
    ];
    const forged = `x\n{"level":60,"msg":"forged"}${"y".repeat(60_000)}`;
    const res = await createType("format.forged", { type: "string", format: forged });
    expect(res.status).toBe(201);
    const printed = writes.flatMap((spy) => spy.mock.calls.map(([text]) => String(text)));
    for (const spy of writes) spy.mockRestore();
    expect(printed.filter((text) => text.includes("unknown format"))).toEqual([]);
  });

  it("uniqueItems over 20,000 objects is checked in linear time", async () => {
    expect(
      (await createType("unique.sent", { type: "object", properties: { a: { uniqueItems: true } } })).status,
    ).toBe(201);
    const items = Array.from({ length: 20_000 }, (_, i) => ({ i, tag: "t" }));
    expect((await send("unique.sent", { a: items })).status).toBe(201);
    const res = await send("unique.sent", { a: [...items, { tag: "t", i: 7 }] });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual([
      { path: "/a", message: "must NOT have duplicate items (items ## 7 and 20000 are identical)" },
    ]);
  });
});
