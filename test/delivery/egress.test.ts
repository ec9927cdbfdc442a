import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { endpointAuthContext } from "@herald/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtures, setupApp } from "../support/fixtures.ts";
import { makePki } from "../support/pki.ts";
import { deadPort } from "../support/ports.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { startSystem, type TestSystem } from "../support/system.ts";

/**
 * EGRESS_PROXY_URL: webhooks go out through an HTTP CONNECT proxy made here, which records what
 * it was asked to reach. The sender resolves names itself and asks for the address, so the SSRF
 * guard holds through the proxy; the proxy failing is a `proxy_error`, not the endpoint's.
 */
type Proxy = { url: string; asked: string[]; refuse: number; close(): Promise<void> };

async function startProxy(): Promise<Proxy> {
  const asked: string[] = [];
  const proxy: Proxy = { url: "", asked, refuse: 0, close: async () => {} };
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on("connect", (req, client, head) => {
    asked.push(String(req.url));
    if (proxy.refuse) return client.end(`HTTP/1.1 ${proxy.refuse} Refused\r\n\r\n`);
    const [host, port] = [
      String(req.url)
        .replace(/:\d+$/, "")
        .replace(/^\[|\]$/g, ""),
      Number(String(req.url).split(":").pop()),
    ];
    const upstream = connect({ host, port }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return proxy;
}

let proxy: Proxy;
let receiver: Receiver;
beforeAll(async () => {
  proxy = await startProxy();
  receiver = await startReceiver();
});
afterAll(async () => {
  await proxy?.close();
  await receiver?.close();
});

const port = () => new URL(receiver.url).port;

describe("egress through a proxy", () => {
  let sys: TestSystem;
  let f: ReturnType<typeof fixtures>;
  beforeAll(async () => {
    sys = await startSystem({
      EGRESS_PROXY_URL: proxy.url,
      EGRESS_NO_PROXY: "example.com, 127.0.0.0/8",
      RETRY_SCHEDULE: "1s",
    });
    await setupApp(sys, ["order.placed"]);
    f = fixtures(sys, receiver);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("sends webhooks through the proxy, to the address the sender resolved", async () => {
    const res = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://localhost:${port()}/via-proxy` },
    });
    const ep = res.body.id as string;
    const event = await f.send("order.placed");
    await expect.poll(() => f.status(event, ep), { timeout: 15_000 }).toBe("succeeded");
    expect(receiver.received("/via-proxy")).toHaveLength(1);
    // An address, never the name: the proxy resolved nothing of the customer's.
    expect(proxy.asked).toContain(`127.0.0.1:${port()}`);
    expect(proxy.asked.some((a) => a.startsWith("localhost"))).toBe(false);
    await sys.request("DELETE", `/v3/endpoints/${ep}`);
  });

  it("tells the proxy refusing apart from the endpoint failing, and does not hold it against the endpoint", async () => {
    const res = await sys.request("POST", "/v3/endpoints", {
      // Another port than the first test's: its tunnel, kept alive, would be used again.
      json: { app: "acme", url: `http://localhost:${await deadPort()}/refused` },
    });
    const ep = res.body.id as string;
    // 407: the proxy wants credentials Herald was not given, the operator's failure.
    proxy.refuse = 407;
    try {
      const event = await f.send("order.placed");
      await expect.poll(() => f.status(event, ep), { timeout: 15_000 }).toBe("failed");
    } finally {
      proxy.refuse = 0;
    }
    const attempts = await f.attempts(`endpoint=${ep}`);
    expect(attempts.map((a) => a.error)).toEqual(["proxy_error", "proxy_error"]);
    const endpoint = (await sys.request("GET", `/v3/endpoints/${ep}`)).body;
    expect(endpoint.delivery_state.state).toBe("active");
    // The endpoint's failure clock did not start: not its fault.
    const stats = (await sys.request("GET", `/v3/endpoints/${ep}/stats`)).body;
    expect(stats).toHaveProperty("failing_since", null);

    // 403: the proxy's policy refuses that destination, the endpoint's failure.
    const policy = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://localhost:${await deadPort()}/policy` },
    });
    proxy.refuse = 403;
    try {
      const refused = await f.send("order.placed");
      await expect.poll(() => f.status(refused, policy.body.id), { timeout: 15_000 }).toBe("failed");
    } finally {
      proxy.refuse = 0;
    }
    expect((await f.attempts(`endpoint=${policy.body.id}`)).map((a) => a.error)).toEqual([
      "blocked_destination",
      "blocked_destination",
    ]);
    expect(
      (await sys.request("GET", `/v3/endpoints/${policy.body.id}/stats`)).body.failing_since,
    ).not.toBeNull();
    await sys.request("DELETE", `/v3/endpoints/${policy.body.id}`);

    // The proxy reaching nothing there is the endpoint's connection_error, as directly.
    const gone = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://localhost:${await deadPort()}/gone` },
    });
    const lost = await f.send("order.placed");
    await expect.poll(() => f.status(lost, gone.body.id), { timeout: 15_000 }).toBe("failed");
    expect((await f.attempts(`endpoint=${gone.body.id}`)).map((a) => a.error)).toEqual([
      "connection_error",
      "connection_error",
    ]);
    for (const id of [ep, gone.body.id]) await sys.request("DELETE", `/v3/endpoints/${id}`);
  });

  it("fails an attempt whose TLS material Node refuses as tls_error, and goes on", async () => {
    // Saved past the gateway's checks (which refuse it): a good certificate, then a broken one.
    const pki = makePki();
    const res = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `https://localhost:${port()}/broken-tls` },
    });
    const ep = res.body.id as string;
    const auth = {
      tls: {
        certificate: `${pki.client.cert}-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n`,
        key: pki.client.key,
      },
    };
    await sys.gateway.deps.pool.query("UPDATE endpoints SET auth_sealed = $2 WHERE id = $1", [
      ep,
      sys.gateway.deps.secrets.seal(JSON.stringify(auth), endpointAuthContext(ep)),
    ]);
    const event = await f.send("order.placed");
    await expect.poll(() => f.status(event, ep), { timeout: 15_000 }).toBe("failed");
    expect((await f.attempts(`endpoint=${ep}`)).map((a) => a.error)).toEqual(["tls_error", "tls_error"]);
    await sys.request("DELETE", `/v3/endpoints/${ep}`);

    // The sender is still there: the next webhook goes.
    receiver.on("/after-broken", { status: 200 });
    const next = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://localhost:${port()}/after-broken` },
    });
    const after = await f.send("order.placed");
    await expect.poll(() => f.status(after, next.body.id), { timeout: 15_000 }).toBe("succeeded");
    await sys.request("DELETE", `/v3/endpoints/${next.body.id}`);
  });

  it("goes direct to hosts on EGRESS_NO_PROXY", async () => {
    const before = proxy.asked.length;
    const res = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://127.0.0.1:${port()}/direct` },
    });
    const event = await f.send("order.placed");
    await expect.poll(() => f.status(event, res.body.id), { timeout: 15_000 }).toBe("succeeded");
    // The app's only endpoint now: nothing went through the proxy.
    expect(proxy.asked.slice(before)).toEqual([]);
    expect(receiver.received("/direct")).toHaveLength(1);
  });
});

describe("egress through a proxy, the SSRF guard on", () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startSystem({
      EGRESS_PROXY_URL: proxy.url,
      ALLOW_PRIVATE_DESTINATIONS: "false",
      RETRY_SCHEDULE: "1s",
    });
    await setupApp(sys, ["order.placed"]);
  });
  afterAll(async () => {
    await sys?.close();
  });

  it("refuses a name that resolves to a private address before anything reaches the proxy", async () => {
    const f = fixtures(sys, receiver);
    const before = proxy.asked.length;
    const res = await sys.request("POST", "/v3/endpoints", {
      json: { app: "acme", url: `http://localhost:${port()}/guarded` },
    });
    const event = await f.send("order.placed");
    await expect.poll(() => f.status(event, res.body.id), { timeout: 15_000 }).toBe("failed");
    expect((await f.attempts(`endpoint=${res.body.id}`))[0]?.error).toBe("blocked_destination");
    expect(proxy.asked.slice(before)).toEqual([]);
    expect(receiver.received("/guarded")).toHaveLength(0);
  });
});
