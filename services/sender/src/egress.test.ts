import { createServer, get, type Server } from "node:http";
import { type AddressInfo, connect, isIP } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import { egressAgents, ProxyError, parseNoProxy } from "./egress.ts";

describe("EGRESS_NO_PROXY", () => {
  it("matches names and their subdomains, host:port, addresses, CIDRs and *", () => {
    const direct = parseNoProxy(
      "example.com, .internal.test ,api.partner.io:8443 10.0.0.0/8 [::1]:80 192.0.2.7",
    );
    expect(direct("example.com", 443)).toBe(true);
    expect(direct("hooks.example.com", 443)).toBe(true);
    expect(direct("notexample.com", 443)).toBe(false);
    expect(direct("a.internal.test", 80)).toBe(true);
    expect(direct("api.partner.io", 8443)).toBe(true);
    expect(direct("api.partner.io", 443)).toBe(false);
    expect(direct("10.2.3.4", 80)).toBe(true);
    expect(direct("11.2.3.4", 80)).toBe(false);
    expect(direct("[::1]", 80)).toBe(true);
    expect(direct("::1", 81)).toBe(false);
    expect(direct("192.0.2.7", 1)).toBe(true);
    expect(parseNoProxy("*")("anything", 1)).toBe(true);
    expect(parseNoProxy("")("example.com", 443)).toBe(false);
    expect(parseNoProxy(undefined)("example.com", 443)).toBe(false);
  });
});

describe("the egress settings", () => {
  const base = { ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") };
  it("are refused as configuration, never a crash, and a password is never repeated", () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig({ ...base, ...env });
      } catch (err) {
        return (err as Error).message;
      }
      return "";
    };
    expect(problems({ EGRESS_NO_PROXY: "10.0.0.0/33" })).toContain("EGRESS_NO_PROXY");
    const bad = problems({ EGRESS_PROXY_URL: "https://user:s3cret@proxy:3128" });
    expect(bad).toContain("EGRESS_PROXY_URL");
    expect(bad).not.toContain("s3cret");
    expect(problems({ EGRESS_PROXY_URL: "http://us%zz:pw@proxy:3128" })).toContain("%-escape");
    expect(loadConfig({ ...base, EGRESS_PROXY_URL: "http://proxy:3128" }).egressProxyUrl?.host).toBe(
      "proxy:3128",
    );
  });
});

describe("a webhook through the proxy", () => {
  // An endpoint on 127.0.0.1 only, and a CONNECT proxy that says what it was asked for.
  const asked: string[] = [];
  let refuse = 0;
  let endpoint: Server;
  let proxy: Server;
  beforeAll(async () => {
    endpoint = createServer((_req, res) => res.end("ok"));
    proxy = createServer((_req, res) => res.writeHead(405).end());
    proxy.on("connect", (req, client) => {
      asked.push(String(req.url));
      if (refuse) return client.end(`HTTP/1.1 ${refuse} No\r\n\r\n`);
      // No IPv6 beyond this proxy: it cannot reach such an address.
      if (String(req.url).startsWith("[")) return client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n");
      const [host, port] = String(req.url).split(":");
      const upstream = connect({ host, port: Number(port) }, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.pipe(client).pipe(upstream);
      });
      upstream.on("error", () => client.end("HTTP/1.1 502 Bad Gateway\r\n\r\n"));
    });
    for (const s of [endpoint, proxy]) await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  });
  afterAll(() => {
    for (const s of [endpoint, proxy]) s.close();
  });

  /** GET through the proxied agents of a timeout, the endpoint's name resolving to `addresses`. */
  function fetchVia(addresses: string[], timeoutMs = 5000, through: Server = proxy): Promise<string> {
    const agents = egressAgents(
      {},
      new URL(`http://127.0.0.1:${(through.address() as AddressInfo).port}`),
      parseNoProxy(""),
    ).of(timeoutMs);
    const lookup = (
      _h: string,
      _o: object,
      cb: (e: null, a: { address: string; family: number }[]) => void,
    ) =>
      cb(
        null,
        addresses.map((address) => ({ address, family: isIP(address) })),
      );
    return new Promise((resolve, reject) => {
      const port = (endpoint.address() as AddressInfo).port;
      get({ host: "hooks.test", port, path: "/", agent: agents.http, lookup } as never, (res) => {
        res.setEncoding("utf8");
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve(body));
      }).on("error", reject);
    });
  }

  it("tries the endpoint's next address when the proxy cannot reach one, as a direct connection would", async () => {
    asked.length = 0;
    const port = (endpoint.address() as AddressInfo).port;
    // Nothing listens on 127.0.0.2: the proxy answers 502 for it, and the next address is asked for.
    expect(await fetchVia(["127.0.0.2", "127.0.0.1"])).toBe("ok");
    expect(asked).toEqual([`127.0.0.2:${port}`, `127.0.0.1:${port}`]);
  });

  it("tries the families in turns, so four IPv6 addresses first do not hide the IPv4 one", async () => {
    asked.length = 0;
    const port = (endpoint.address() as AddressInfo).port;
    expect(await fetchVia(["::2", "::3", "::4", "::5", "127.0.0.1"])).toBe("ok");
    expect(asked).toEqual([`[::2]:${port}`, `127.0.0.1:${port}`]);
  });

  it("asks for no other address when the proxy itself fails, and at most four", async () => {
    asked.length = 0;
    refuse = 407;
    await expect(fetchVia(["127.0.0.2", "127.0.0.1"])).rejects.toBeInstanceOf(ProxyError);
    expect(asked).toHaveLength(1);
    // A 503 may be the proxy's own load: the endpoint's failure, but no more addresses asked of it.
    asked.length = 0;
    refuse = 503;
    await expect(fetchVia(["127.0.0.2", "127.0.0.1"])).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(asked).toHaveLength(1);
    refuse = 0;
    asked.length = 0;
    await expect(fetchVia(Array.from({ length: 6 }, (_, i) => `127.0.0.${i + 2}`))).rejects.toMatchObject({
      code: "ECONNREFUSED",
    });
    expect(asked).toHaveLength(4);
  });

  it("gives a tunnel no longer than its attempt's timeout, whatever the longest attempt may take", async () => {
    // A proxy that accepts the connection and never answers CONNECT: only the tunnel's deadline ends it.
    const silent = createServer();
    silent.on("connection", (socket) => socket.on("error", () => {}));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      // Connected, a proxy waits on the endpoint before it answers: the endpoint's timeout, its
      // budget what was left of the attempt's 300 ms once the name was resolved.
      const err = await fetchVia(["127.0.0.1"], 300, silent).catch((e: Error & { code?: string }) => e);
      expect(err).toMatchObject({ code: "ETIMEDOUT" });
      const budget = Number(/within (\d+) ms/.exec(String((err as Error).message))?.[1]);
      expect(budget).toBeGreaterThan(0);
      expect(budget).toBeLessThanOrEqual(300);
    } finally {
      silent.close();
    }
    const agents = egressAgents({}, new URL("http://127.0.0.1:1"), parseNoProxy(""));
    expect(agents.of(300)).toBe(agents.of(300));
    expect(agents.of(300)).not.toBe(agents.of(5000));
    const direct = egressAgents({}, null, parseNoProxy(""));
    expect(direct.of(300)).toBe(direct.of(5000));
    agents.destroy();
    direct.destroy();
  });
});
