import { statSync } from "node:fs";
import type { AddressInfo, Socket } from "node:net";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { deadPort } from "../support/ports.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";
import { cliEnv, herald, start } from "./cli.ts";

/**
 * The `herald` CLI against the whole system: configuration (flags, environment, a profile from
 * `herald login`), the list and show commands with the API's filters, `send`, `replay` with its
 * preview and progress, `tail`, and the exit codes scripts rely on.
 */
let sys: TestSystem;
let receiver: Receiver;
let f: ReturnType<typeof fixtures>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  receiver = await startReceiver();
  await setupApp(sys, ["invoice.paid", "invoice.voided"]);
  f = fixtures(sys, receiver);
  env = cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: sys.key });
});
afterAll(async () => {
  await sys?.close();
  await receiver?.close();
});

const json = (text: string) => JSON.parse(text);

describe("herald, configured", () => {
  it("says how to use it, with exit code 2 for a usage mistake", async () => {
    const help = await herald(["--help"], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("herald listen".slice(7));
    expect(help.stdout).toMatch(/replay\s+Replays an endpoint's failed deliveries/);
    expect((await herald(["--version"], env)).stdout).toMatch(/^herald \d+\.\d+\.\d+\n$/);
    const unknown = await herald(["apps", "lsit"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("herald apps list");
    const flag = await herald(["apps", "list", "--nope"], env);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("--nope");
    expect((await herald(["apps", "list", "--limit", "0"], env)).code).toBe(2);
    expect((await herald(["replay", "ep_x", "--since", "99999999999999"], env)).code).toBe(2);
    expect((await herald(["apps", "list", "--url", "ftp://example.com"], env)).code).toBe(2);
    const pasted = await herald(
      ["apps", "list"],
      cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: `${sys.key}\n` }),
    );
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toContain("HERALD_API_KEY");
    const noKey = await herald(["apps", "list"], cliEnv({ HERALD_URL: sys.url }));
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("herald login");
  });

  it("logs in with a key from stdin, keeps it in a private profile, and uses it", async () => {
    const own = cliEnv();
    const refused = await herald(["login", "--url", sys.url], own, "hk_not_a_real_key_0000000000000000");
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("Invalid API key");
    const login = await herald(["login", "--url", sys.url], own, `${sys.key}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("Logged in");
    expect(login.stderr).not.toContain(sys.key);
    expect(statSync(own.HERALD_CONFIG!).mode & 0o777).toBe(0o600);
    const config = json((await herald(["config", "--json"], own)).stdout);
    expect(config).toMatchObject({
      url: sys.url,
      url_from: "profile default",
      api_key_from: "profile default",
    });
    const apps = await herald(["apps", "list", "--json"], own);
    expect(apps.code, apps.stderr).toBe(0);
    expect(json(apps.stdout).map((a: { uid: string }) => a.uid)).toContain("acme");
    // A flag wins over the profile.
    const flagged = await herald(["apps", "list", "--api-key", "hk_not_a_real_key_0000000000000000"], own);
    expect(flagged.code).toBe(3);
    // Another profile used (here for its listen secret) does not become the current one.
    expect((await herald(["listen", "--print-secret", "--profile", "other"], own)).code).toBe(0);
    expect(json((await herald(["config", "--json"], own)).stdout).profile).toBe("default");
    expect((await herald(["logout"], own)).code).toBe(0);
    expect((await herald(["apps", "list"], own)).code).toBe(2);
  });

  it("lists and shows each resource as a table or JSON, with the API's filters", async () => {
    const ep = await f.endpoint("/ok", { event_types: ["invoice.paid"] });
    const sent = await herald(["send", "invoice.paid", "--app", "acme", "--data", '{"id":"in_1"}'], env);
    expect(sent.code, sent.stderr).toBe(0);
    const event = sent.stdout.split("\n")[0]!;
    expect(event).toMatch(/^evt_/);
    await expect.poll(() => f.status(event, ep), { timeout: 15_000 }).toBe("succeeded");

    const apps = await herald(["apps", "list"], env);
    expect(apps.stdout.split("\n")[0]).toMatch(/^ID\s+UID\s+NAME\s+CREATED$/);
    expect(apps.stdout).toMatch(/app_\w+\s+acme\s+acme/);
    expect(json((await herald(["apps", "show", "acme", "--json"], env)).stdout).uid).toBe("acme");
    const endpoints = await herald(["endpoints", "list", "--app", "acme"], env);
    expect(endpoints.stdout).toContain(ep);
    expect(endpoints.stdout).toMatch(/active\s+invoice\.paid/);
    const shown = json((await herald(["endpoints", "show", ep, "--json"], env)).stdout);
    expect(shown).toMatchObject({ id: ep, health: expect.any(Object) });
    const types = (await herald(["event-types", "list"], env)).stdout;
    expect(types).toMatch(/^invoice\.paid /m);
    expect(types).toMatch(/^invoice\.voided /m);
    expect(json((await herald(["event-types", "show", "invoice.paid", "--json"], env)).stdout).name).toBe(
      "invoice.paid",
    );
    const events = await herald(["events", "list", "--type", "invoice.paid", "--status", "succeeded"], env);
    expect(events.stdout).toMatch(new RegExp(`${event}\\s+app_\\w+\\s+invoice\\.paid\\s+1 succeeded`));
    expect((await herald(["events", "list", "--type", "invoice.voided"], env)).stderr).toContain(
      "No events.",
    );
    const eventShown = await herald(["events", "show", event], env);
    expect(eventShown.stdout).toContain('"id": "in_1"');
    expect(eventShown.stdout).toMatch(new RegExp(`${ep}\\s+succeeded\\s+1`));
    const attempts = json((await herald(["attempts", "list", "--event", event, "--json"], env)).stdout);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ endpoint: ep, status: "succeeded", response_status: 200 });
    const attempt = json((await herald(["attempts", "show", attempts[0].id, "--json"], env)).stdout);
    expect(attempt.id).toBe(attempts[0].id);
    expect((await herald(["attempts", "list", "--status", "nope"], env)).code).toBe(2);

    // --limit pages no further than asked, and says more are left.
    for (let i = 0; i < 3; i++) await f.send("invoice.voided");
    const limited = await herald(["events", "list", "--limit", "2"], env);
    expect(limited.stdout.trim().split("\n")).toHaveLength(3);
    expect(limited.stderr).toContain("--all");
    expect(
      json((await herald(["events", "list", "--all", "--json"], env)).stdout).length,
    ).toBeGreaterThanOrEqual(4);
  });

  it("exits with a code for each kind of failure, with the API's message and param", async () => {
    const missing = await herald(["apps", "show", "nope"], env);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/request req_[0-9a-f]{24}, status 404/);
    const invalid = await herald(["send", "no.such.type", "--app", "acme"], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("(param: type)");
    const asJson = await herald(["send", "no.such.type", "--app", "acme", "--json"], env);
    expect(json(asJson.stderr)).toMatchObject({ error: { param: "type", status: 400 } });
    expect((await herald(["send", "invoice.paid", "--app", "acme", "--data", "[1]"], env)).code).toBe(2);
    expect((await herald(["send", "invoice.paid"], env)).code).toBe(2);
    const down = await herald(["apps", "list", "--url", `http://127.0.0.1:${await deadPort()}`], env);
    expect(down.code).toBe(5);
    expect(down.stderr).toContain("Is the gateway running");
  });

  it("ends a command waiting on a silent gateway at the first Ctrl-C, with 130", async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const { port } = silent.address() as AddressInfo;
    const waiting = start(["apps", "list", "--url", `http://127.0.0.1:${port}`], env);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await waiting.interrupt()).toBe(130);
    for (const socket of held) socket.destroy();
    await new Promise<void>((r) => silent.close(() => r()));
  });

  it("prints what others wrote with control characters escaped", async () => {
    receiver.on("/hostile", { status: 200, body: "ok\x1b]52;c;ZXZpbA==\x07\x1b[2J" });
    const ep = await f.endpoint("/hostile", {
      event_types: ["invoice.paid"],
      description: "mine\x1b[1A\x1b[2K",
    });
    const event = await f.send("invoice.paid");
    await expect.poll(() => f.status(event, ep), { timeout: 15_000 }).toBe("succeeded");
    const [attempt] = await f.attempts(`endpoint=${ep}`);
    const shown = await herald(["attempts", "show", attempt!.id], env);
    expect(shown.stdout).not.toContain("\x1b");
    expect(shown.stdout).toContain("ok\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J");
    const listed = await herald(["endpoints", "show", ep], env);
    expect(listed.stdout).not.toContain("\x1b");
    expect(listed.stdout).toContain("mine\\x1b[1A");
    // --json is for programs: the text as it is, JSON-escaped.
    expect(
      json((await herald(["attempts", "show", attempt!.id, "--json"], env)).stdout).response_body,
    ).toContain("\x1b]52");
  });

  it("dry-runs a send: which endpoints would receive it, and why not", async () => {
    const picky = await f.endpoint("/picky", {
      event_types: ["invoice.voided"],
      filter: { "data.n": { $gt: 10 } },
    });
    const args = ["send", "invoice.voided", "--app", "acme", "--dry-run"];
    const no = await herald([...args, "--data", '{"n":1}'], env);
    expect(no.code, no.stderr).toBe(0);
    expect(no.stdout).toMatch(new RegExp(`${picky}\\s+no\\s+Its filter does not match`));
    const yes = json((await herald([...args, "--data", '{"n":11}', "--json"], env)).stdout);
    expect(yes.endpoints.find((e: { endpoint: string }) => e.endpoint === picky).receives).toBe(true);
    expect((await sys.request("DELETE", `/v3/endpoints/${picky}`)).status).toBe(200);
  });

  it("sends with an idempotency key once, and reads data from a file or stdin", async () => {
    const args = ["send", "invoice.voided", "--app", "acme", "--idempotency-key", "cli-once", "--json"];
    const first = json((await herald([...args, "--data", "-"], env, '{"n":7}')).stdout);
    const again = json((await herald([...args, "--data", "-"], env, '{"n":7}')).stdout);
    expect(again.id).toBe(first.id);
    expect(first.data).toEqual({ n: 7 });
  });
});

describe("herald keys", () => {
  it("makes a key with scopes, lists it, says which scope a refused call needs, and revokes it", async () => {
    const made = await herald(
      ["keys", "create", "--name", "checkout", "--scope", "events:write,apps:read", "--json"],
      env,
    );
    expect(made.code, made.stderr).toBe(0);
    const key = json(made.stdout);
    expect(key).toMatchObject({ name: "checkout", scopes: ["events:write", "apps:read"], app: null });
    const listed = await herald(["keys", "list"], env);
    expect(listed.stdout).toMatch(new RegExp(`${key.id}\\s+checkout\\s+\\S+\\s+events:write,apps:read`));

    const asKey = cliEnv({ HERALD_URL: sys.url, HERALD_API_KEY: key.key });
    expect((await herald(["apps", "list"], asKey)).code).toBe(0);
    const refused = await herald(["endpoints", "list"], asKey);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("lacks the scope 'endpoints:read'");
    expect(refused.stderr).toContain("herald keys create --scope endpoints:read");
    // Nor can it make a key of any kind: it lacks `keys`.
    expect((await herald(["keys", "create", "--scope", "events:write"], asKey)).code).toBe(3);
    const typo = await herald(["keys", "create", "--scope", "event:write"], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("--scope must be one of");

    expect((await herald(["keys", "revoke", key.id], env)).code).toBe(0);
    expect((await herald(["apps", "list"], asKey)).code).toBe(3);
  });
});

describe("herald replay", () => {
  it("previews, replays with a progress report, and exits 6 while deliveries fail again", async () => {
    receiver.on("/flaky", { status: 500 });
    const ep = await f.endpoint("/flaky", { event_types: ["invoice.voided"] });
    const events = [await f.send("invoice.voided"), await f.send("invoice.voided")];
    for (const e of events) await expect.poll(() => f.status(e, ep), { timeout: 20_000 }).toBe("failed");

    const dry = await herald(["replay", ep, "--dry-run"], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain("2 failed deliveries");
    for (const e of events) expect(dry.stderr).toContain(e);
    expect(json((await herald(["replay", ep, "--dry-run", "--json"], env)).stdout)).toMatchObject({
      count: 2,
    });
    expect(
      json((await herald(["replay", ep, "--event", events[0]!, "--dry-run", "--json"], env)).stdout).count,
    ).toBe(1);
    expect((await herald(["replay", ep, "--since", "yesterday"], env)).code).toBe(2);
    expect(
      json(
        (
          await herald(
            ["replay", ep, "--since", new Date(Date.now() + 60_000).toISOString(), "--dry-run", "--json"],
            env,
          )
        ).stdout,
      ).count,
    ).toBe(0);

    const failing = await herald(["replay", ep], env);
    expect(failing.code, failing.stderr).toBe(6);
    expect(failing.stderr).toMatch(/\[#+\] 2\/2 attempted, 0 succeeded, 2 failed/);

    receiver.on("/flaky", { status: 200 });
    for (const e of events) await expect.poll(() => f.status(e, ep), { timeout: 20_000 }).toBe("failed");
    const healed = await herald(["replay", ep, "--json"], env);
    expect(healed.code, healed.stderr).toBe(0);
    expect(json(healed.stdout)).toMatchObject({
      queued: 2,
      attempted: 2,
      succeeded: 2,
      failed: 0,
      pending: 0,
    });
    for (const e of events) expect(await f.status(e, ep)).toBe("succeeded");
    const nothing = await herald(["replay", ep], env);
    expect(nothing.code).toBe(0);
    expect(nothing.stderr).toContain("0 failed deliveries");
  });
});

describe("herald tail", () => {
  it("prints attempts as they get their results, filtered, until Ctrl-C", async () => {
    receiver.on("/tail-ok", { status: 204 });
    receiver.on("/tail-bad", { status: 503 });
    const ok = await f.endpoint("/tail-ok", { event_types: ["invoice.paid"] });
    const bad = await f.endpoint("/tail-bad", { event_types: ["invoice.paid"] });
    const all = start(["tail", "--app", "acme", "--json"], env);
    const failedOnly = start(["tail", "--endpoint", bad, "--status", "failed"], env);
    // Both know the newest attempt before the event is sent: only what follows is shown.
    await all.waitFor(/Waiting for attempts/);
    await failedOnly.waitFor(/Waiting for attempts/);
    const event = await f.send("invoice.paid", { tail: true });
    await all.waitFor(
      new RegExp(
        `"endpoint":"${ok}"[^\\n]*"status":"succeeded"|"status":"succeeded"[^\\n]*"endpoint":"${ok}"`,
      ),
    );
    await failedOnly.waitFor(new RegExp(`${event}\\s+${bad}`));
    expect(await all.interrupt()).toBe(0);
    expect(await failedOnly.interrupt()).toBe(0);
    const lines = all
      .output()
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // Only new attempts, each once it has its result.
    expect(lines.every((a: { status: string }) => a.status !== "pending")).toBe(true);
    expect(
      lines.filter((a: { event: string; endpoint: string }) => a.event === event && a.endpoint === ok),
    ).toHaveLength(1);
    const shown = failedOnly.output().stdout;
    expect(shown).not.toContain(ok);
    expect(shown).toMatch(/failed\s+http_error 503/);
  });
});
