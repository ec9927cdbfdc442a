import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { cliEnv, herald } from "./cli.ts";

/**
 * `herald endpoints create` and `update` with a transformation from a file (or stdin), and
 * `endpoints test-transformation`, against a gateway: what a developer does to write one.
 */
let gw: TestGateway;
let env: NodeJS.ProcessEnv;
const dir = mkdtempSync(join(tmpdir(), "herald-cli-transformations-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const json = (text: string) => JSON.parse(text);

const SLACK = `function handler(webhook) {
  webhook.payload = { text: "Paid: " + webhook.payload.data.amount };
  return webhook;
}
`;

beforeAll(async () => {
  // A budget no fair run comes near on a machine busy with the CLI's own builds.
  gw = await startGateway({ TRANSFORMATION_TIMEOUT: "1s" });
  await gw.request("POST", "/v3/apps", { json: { uid: "acme", name: "Acme" } });
  const schema = { type: "object", properties: { amount: { type: "integer", examples: [4200] } } };
  await gw.request("POST", "/v3/event-types", { json: { name: "invoice.paid", schema } });
  env = cliEnv({ HERALD_URL: gw.url, HERALD_API_KEY: gw.key });
});
afterAll(() => gw?.close());

describe("herald endpoints", () => {
  it("creates an endpoint with its transformation from a file, and shows the code", async () => {
    const made = await herald(
      [
        "endpoints",
        "create",
        "https://hooks.example.com/in",
        "--app",
        "acme",
        "--event-types",
        "invoice.paid",
      ].concat(["--transformation-file", file("slack.js", SLACK), "--json"]),
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const endpoint = json(made.stdout);
    expect(endpoint).toMatchObject({ event_types: ["invoice.paid"], transformation: SLACK });
    const shown = await herald(["endpoints", "show", endpoint.id], env);
    expect(shown.stdout).toContain(`transformation\n${SLACK}`);
  });

  it("updates it from stdin, says a syntax error's line, and removes it", async () => {
    const id = json(
      (await herald(["endpoints", "create", "https://b.example.com", "--app", "acme", "--json"], env)).stdout,
    ).id;
    const piped = await herald(
      ["endpoints", "update", id, "--transformation-file", "-", "--json"],
      env,
      SLACK,
    );
    expect(json(piped.stdout).transformation).toBe(SLACK);
    const broken = await herald(
      [
        "endpoints",
        "update",
        id,
        "--transformation-file",
        file("broken.js", "function handler(w) {\n  return w +;\n}"),
      ],
      env,
    );
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/SyntaxError: .+ \(line 2\)/);
    expect(broken.stderr).toContain("(param: transformation)");
    const removed = await herald(["endpoints", "update", id, "--no-transformation", "--json"], env);
    expect(json(removed.stdout).transformation).toBeNull();
    expect((await herald(["endpoints", "update", id], env)).code).toBe(2);
  });

  it("tries a transformation on a type's example or given data, and exits 1 when it fails", async () => {
    const id = json(
      (
        await herald(
          ["endpoints", "create", "https://c.example.com/in", "--app", "acme", "--json"].concat([
            "--transformation-file",
            file("c.js", SLACK),
          ]),
          env,
        )
      ).stdout,
    ).id;
    const example = await herald(
      ["endpoints", "test-transformation", id, "--event-type", "invoice.paid"],
      env,
    );
    expect(example.code, example.stderr).toBe(0);
    expect(example.stdout).toBe(
      `POST https://c.example.com/in\n\n${JSON.stringify({ text: "Paid: 4200" })}\n`,
    );
    const given = await herald(
      [
        "endpoints",
        "test-transformation",
        id,
        "--event-type",
        "invoice.paid",
        "--data",
        '{"amount": 5}',
        "--json",
      ],
      env,
    );
    expect(json(given.stdout).request.body).toBe(JSON.stringify({ text: "Paid: 5" }));
    const cancel = file(
      "cancel.js",
      "function handler(w) { w.cancel = w.payload.data.amount < 100; return w; }",
    );
    const cancelled = await herald(
      [
        "endpoints",
        "test-transformation",
        id,
        "--event-type",
        "invoice.paid",
        "--data",
        '{"amount": 5}',
      ].concat(["--transformation-file", cancel]),
      env,
    );
    expect(cancelled.stdout).toContain("Cancelled");
    const throws = file("throws.js", "function handler(w) {\n  return w.payload.nope.deeper;\n}");
    const failed = await herald(
      [
        "endpoints",
        "test-transformation",
        id,
        "--event-type",
        "invoice.paid",
        "--transformation-file",
        throws,
      ],
      env,
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error: transformation_error \(threw\): TypeError: .+ \(line 2\)$/m);
  });

  it("filters events and attempts by cancelled, the status a transformation's cancel ends in", async () => {
    for (const args of [
      ["events", "list", "--status", "cancelled"],
      ["attempts", "list", "--status", "cancelled"],
    ]) {
      const listed = await herald([...args, "--json"], env);
      expect(listed.code, listed.stderr).toBe(0);
      expect(json(listed.stdout)).toEqual([]);
    }
  });
});
