import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { type AgentOptions, Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { BlockList, connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";

/**
 * Egress through the operator's proxy (EGRESS_PROXY_URL): every webhook goes out through an
 * HTTP CONNECT tunnel, so customers can allowlist the proxy's fixed addresses. Hosts on
 * EGRESS_NO_PROXY go direct.
 *
 * The SSRF guard stays where it was: the sender resolves the endpoint's hostname itself, with
 * the guarded lookup (destinations.ts), and asks the proxy to CONNECT to that address, never to
 * the name. The proxy resolves no customer hostname, so a name that resolves to a private
 * address is refused here exactly as without a proxy. (The proxy's own policy may refuse more.)
 *
 * The proxy failing (unreachable, refusing the tunnel, 407, no answer) is a `proxy_error`: not
 * the endpoint's fault, so it does not count toward disabling it, nor toward its breaker. The
 * proxy saying it could not reach the endpoint (502, 503, 504) is the endpoint's
 * `connection_error`, as a direct connection's would be.
 */
export class ProxyError extends Error {
  readonly code = "HERALD_PROXY_ERROR";
}

type Lookup = (
  hostname: string,
  options: object,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;
type ConnectOptions = {
  host?: string | null;
  hostname?: string | null;
  port?: number | string | null;
  lookup?: Lookup;
  servername?: string;
};
type Callback = (err: Error | null, socket?: Duplex) => void;

/** Whether a host (and port) is on a NO_PROXY-style list: names and their subdomains, `host:port`, IPs, CIDRs, `*`. */
export type NoProxy = (host: string, port: number) => boolean;

export function parseNoProxy(list: string | undefined): NoProxy {
  const entries = (list ?? "")
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (entries.includes("*")) return () => true;
  const networks = new BlockList();
  const names: { host: string; port: number | null }[] = [];
  for (const entry of entries) {
    const [net, prefix] = entry.split("/");
    if (prefix !== undefined && isIP(net!)) {
      networks.addSubnet(net!, Number(prefix), isIP(net!) === 4 ? "ipv4" : "ipv6");
      continue;
    }
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    const hostPort = /^([^:]+):(\d+)$/.exec(entry);
    const [host, port] = bracketed
      ? [bracketed[1]!, bracketed[2]]
      : hostPort
        ? [hostPort[1]!, hostPort[2]]
        : [entry, undefined];
    names.push({ host: host.replace(/^\*?\./, ""), port: port === undefined ? null : Number(port) });
  }
  return (rawHost, port) => {
    const host = rawHost.toLowerCase().replace(/^\[|\]$/g, "");
    const family = isIP(host);
    if (family && networks.check(host, family === 4 ? "ipv4" : "ipv6")) return true;
    return names.some(
      (n) => (n.port === null || n.port === port) && (host === n.host || host.endsWith(`.${n.host}`)),
    );
  };
}

/** A tunnel to `target` (`address:port`) through the proxy, once it answered 200. */
function tunnel(proxy: URL, target: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: proxy.hostname.replace(/^\[|\]$/g, ""), port: Number(proxy.port || 80) });
    const auth = proxy.username
      ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}\r\n`
      : "";
    let head = Buffer.alloc(0);
    const done = () => {
      socket.off("data", onData);
      socket.off("error", onError);
      socket.setTimeout(0);
    };
    const fail = (err: Error) => {
      done();
      socket.destroy();
      reject(err);
    };
    const onError = (err: NodeJS.ErrnoException) =>
      fail(
        new ProxyError(`the egress proxy could not be reached: ${err.code ?? err.message}`, { cause: err }),
      );
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > 16_384) fail(new ProxyError("the egress proxy's answer to CONNECT is too long"));
        return;
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head.toString("latin1", 0, end))?.[1] ?? 0);
      if (status === 200) {
        done();
        // Nothing should follow the answer before the request; if it did, it is the tunnel's.
        if (head.length > end + 4) socket.unshift(head.subarray(end + 4));
        return resolve(socket);
      }
      if (status === 502 || status === 503 || status === 504)
        return fail(
          Object.assign(new Error(`the egress proxy could not reach ${target} (it answered ${status})`), {
            code: "ECONNREFUSED",
          }),
        );
      fail(new ProxyError(`the egress proxy refused CONNECT ${target}: ${status || "not an HTTP answer"}`));
    };
    socket.setTimeout(timeoutMs, () =>
      fail(new ProxyError(`the egress proxy did not answer CONNECT within ${timeoutMs} ms`)),
    );
    socket.on("error", onError);
    socket.on("data", onData);
    socket.once("connect", () =>
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`),
    );
  });
}

/** The endpoint's address, resolved here with the request's lookup (the guarded one), then the tunnel to it. */
async function throughProxy(proxy: URL, options: ConnectOptions, timeoutMs: number): Promise<Socket> {
  const host = (options.host ?? options.hostname ?? "localhost").replace(/^\[|\]$/g, "");
  const port = Number(options.port);
  const look = (options.lookup ?? dnsLookup) as Lookup;
  const address = isIP(host)
    ? host
    : await new Promise<string>((resolve, reject) =>
        look(host, {}, (err, found) =>
          err ? reject(err) : resolve(typeof found === "string" ? found : found[0]!.address),
        ),
      );
  return tunnel(proxy, `${isIP(address) === 6 ? `[${address}]` : address}:${port}`, timeoutMs);
}

const hostOf = (options: ConnectOptions) => (options.host ?? options.hostname ?? "").replace(/^\[|\]$/g, "");

/** The sender's HTTP and HTTPS agents: direct, or through the proxy for hosts not on `noProxy`. */
export function egressAgents(
  options: AgentOptions,
  proxy: URL | null,
  noProxy: NoProxy,
  timeoutMs: number,
): { http: HttpAgent; https: HttpsAgent } {
  if (!proxy) return { http: new HttpAgent(options), https: new HttpsAgent(options) };
  const direct = (o: ConnectOptions) => noProxy(hostOf(o), Number(o.port));
  class ProxiedHttpAgent extends HttpAgent {
    override createConnection(o: ConnectOptions, callback: Callback): Duplex | undefined {
      if (direct(o)) return super.createConnection(o as never, callback as never) as Duplex;
      throughProxy(proxy!, o, timeoutMs).then((socket) => callback(null, socket), callback);
      return undefined;
    }
  }
  class ProxiedHttpsAgent extends HttpsAgent {
    override createConnection(o: ConnectOptions, callback: Callback): Duplex | undefined {
      if (direct(o)) return super.createConnection(o as never, callback as never) as Duplex;
      throughProxy(proxy!, o, timeoutMs).then((socket) => {
        const host = hostOf(o);
        callback(
          null,
          tlsConnect({
            ...(o as object),
            socket,
            servername: o.servername || (isIP(host) ? undefined : host),
          }),
        );
      }, callback);
      return undefined;
    }
  }
  return { http: new ProxiedHttpAgent(options), https: new ProxiedHttpsAgent(options) };
}
