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
 * The proxy failing (unreachable, not accepting the connection in time, 407, an answer that is
 * not HTTP) is a `proxy_error`: not the endpoint's fault, so it does not count toward disabling
 * it, nor toward its breaker. What the proxy says of the endpoint is the endpoint's: it could
 * not reach it (502, 503, 504) is a `connection_error`, no answer once connected (a proxy waits
 * on the endpoint before it answers) a `timeout`, and its policy refusing the destination (403)
 * a `blocked_destination`.
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

/** `Proxy-Authorization`, from the proxy URL's user and password; a bad escape is a config error. */
export function proxyAuthorization(proxy: URL): string {
  if (!proxy.username) return "";
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(proxy.username);
    password = decodeURIComponent(proxy.password);
  } catch {
    throw new Error("EGRESS_PROXY_URL's user or password has a bad %-escape");
  }
  return `Proxy-Authorization: Basic ${Buffer.from(`${user}:${password}`).toString("base64")}\r\n`;
}

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

/**
 * A tunnel to `target` (`address:port`) through the proxy, once it answered 200, within
 * `timeoutMs` in all (a proxy trickling its answer a byte at a time gets no more).
 */
function tunnel(proxy: URL, auth: string, target: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: proxy.hostname.replace(/^\[|\]$/g, ""), port: Number(proxy.port || 80) });
    let connected = false;
    let head = Buffer.alloc(0);
    const done = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
    };
    const fail = (err: Error) => {
      done();
      // Errors after this (a reset while closing) have a listener: never an uncaught one.
      socket.on("error", () => {});
      socket.destroy();
      reject(err);
    };
    // Connected, the proxy waits on the endpoint before it answers (Squid does): no answer in
    // time is the endpoint's timeout. Not connected, the proxy is at fault.
    const timer = setTimeout(
      () =>
        fail(
          connected
            ? withCode(
                `no answer from ${target} through the egress proxy within ${timeoutMs} ms`,
                "ETIMEDOUT",
              )
            : new ProxyError(`the egress proxy did not accept a connection within ${timeoutMs} ms`),
        ),
      timeoutMs,
    );
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
      // The proxy could not reach the endpoint: the endpoint's failure, as directly.
      // A 502 or 504 is of this address: the endpoint's next may do. A 503 may be the proxy's own load.
      if (status === 502 || status === 503 || status === 504)
        return fail(
          Object.assign(
            withCode(`the egress proxy could not reach ${target} (it answered ${status})`, "ECONNREFUSED"),
            { nextAddress: status !== 503 },
          ),
        );
      // The proxy's policy refuses this destination: the endpoint's, whatever it asks of it.
      if (status === 403)
        return fail(
          withCode(`the egress proxy refuses to connect to ${target} (403)`, "HERALD_BLOCKED_DESTINATION"),
        );
      fail(new ProxyError(`the egress proxy refused CONNECT ${target}: ${status || "not an HTTP answer"}`));
    };
    socket.on("error", onError);
    socket.on("data", onData);
    socket.once("connect", () => {
      connected = true;
      socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
    });
  });
}

/** Addresses of one endpoint tried through the proxy at most, each a CONNECT the proxy makes. */
const ADDRESSES_MAX = 4;
/** A next address is not tried with less time left than this: it could only time out, and be misnamed. */
const NEXT_TRY_MIN_MS = 250;

/** The proxy could not reach this address of the endpoint (502 or 504): another may do. */
const tryNext = (err: unknown) => (err as { nextAddress?: boolean }).nextAddress === true;

/** The two families in turns, the resolver's first family first, as a direct connection tries them. */
function inTurns(addresses: LookupAddress[]): string[] {
  const first = addresses[0]?.family;
  const [a, b] = [addresses.filter((x) => x.family === first), addresses.filter((x) => x.family !== first)];
  return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => [a[i], b[i]])
    .flat()
    .flatMap((x) => (x ? [x.address] : []));
}

/**
 * The endpoint's addresses, resolved here with the request's lookup (the guarded one), then a
 * tunnel to the first the proxy can reach, the families in turns, as a direct connection tries
 * them: at most ADDRESSES_MAX, all within `timeoutMs` of the start. Any other failure (the
 * proxy's own, a timeout, a refusal by its policy or a 503) ends the tries.
 */
async function throughProxy(
  proxy: URL,
  auth: string,
  options: ConnectOptions,
  timeoutMs: number,
): Promise<Socket> {
  const deadline = Date.now() + timeoutMs;
  const host = (options.host ?? options.hostname ?? "localhost").replace(/^\[|\]$/g, "");
  const port = Number(options.port);
  const look = (options.lookup ?? dnsLookup) as Lookup;
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve, reject) =>
        look(host, { all: true }, (err, found) =>
          err ? reject(err) : resolve(typeof found === "string" ? [found] : inTurns(found)),
        ),
      );
  if (Date.now() >= deadline) throw withCode(`${host} took the attempt's time to resolve`, "ETIMEDOUT");
  let failure: unknown = withCode(`${host} resolved to no address`, "ENOTFOUND");
  for (const [i, address] of addresses.slice(0, ADDRESSES_MAX).entries()) {
    const left = deadline - Date.now();
    if (i > 0 && left < NEXT_TRY_MIN_MS) break;
    try {
      return await tunnel(proxy, auth, `${isIP(address) === 6 ? `[${address}]` : address}:${port}`, left);
    } catch (err) {
      if (!tryNext(err)) throw err;
      failure = err;
    }
  }
  throw failure;
}

const hostOf = (options: ConnectOptions) => (options.host ?? options.hostname ?? "").replace(/^\[|\]$/g, "");

type Agents = { http: HttpAgent; https: HttpsAgent };

/**
 * The sender's HTTP and HTTPS agents, for attempts of one timeout. Through the proxy, a tunnel
 * is given no longer than its attempt: got's own timeout cannot end a request that is still
 * waiting for its connection (Node hands the request its error only once the agent gives it a
 * socket), so the tunnel's deadline is the attempt's.
 */
export type EgressAgents = {
  /** The agents for attempts of `timeoutMs`, made at first use: timeouts are few (ATTEMPT_TIMEOUT). */
  of(timeoutMs: number): Agents;
  destroy(): void;
};

/** Direct, or through the proxy for hosts not on `noProxy`. */
export function egressAgents(options: AgentOptions, proxy: URL | null, noProxy: NoProxy): EgressAgents {
  const made = new Map<number, Agents>();
  const destroy = () => {
    for (const agents of made.values()) {
      agents.http.destroy();
      agents.https.destroy();
    }
  };
  if (!proxy) {
    const agents = { http: new HttpAgent(options), https: new HttpsAgent(options) };
    made.set(0, agents);
    return { of: () => agents, destroy };
  }
  const auth = proxyAuthorization(proxy);
  return {
    of(timeoutMs) {
      let agents = made.get(timeoutMs);
      if (!agents) {
        agents = proxiedAgents(options, proxy, auth, noProxy, timeoutMs);
        made.set(timeoutMs, agents);
      }
      return agents;
    },
    destroy,
  };
}

function proxiedAgents(
  options: AgentOptions,
  proxy: URL,
  auth: string,
  noProxy: NoProxy,
  timeoutMs: number,
): Agents {
  const direct = (o: ConnectOptions) => noProxy(hostOf(o), Number(o.port));
  class ProxiedHttpAgent extends HttpAgent {
    override createConnection(o: ConnectOptions, callback: Callback): Duplex | undefined {
      if (direct(o)) return super.createConnection(o as never, callback as never) as Duplex;
      throughProxy(proxy, auth, o, timeoutMs).then((socket) => callback(null, socket), callback);
      return undefined;
    }
  }
  class ProxiedHttpsAgent extends HttpsAgent {
    override createConnection(o: ConnectOptions, callback: Callback): Duplex | undefined {
      if (direct(o)) return super.createConnection(o as never, callback as never) as Duplex;
      throughProxy(proxy, auth, o, timeoutMs).then((socket) => {
        const host = hostOf(o);
        let secured: Duplex;
        try {
          secured = tlsConnect({
            ...(o as object),
            socket,
            servername: o.servername || (isIP(host) ? undefined : host),
          });
        } catch (err) {
          // TLS material Node refuses throws here, not in an event: the attempt's error, not
          // an unhandled rejection that would end the process.
          socket.destroy();
          callback(err as Error);
          return;
        }
        callback(null, secured);
      }, callback);
      return undefined;
    }
  }
  return { http: new ProxiedHttpAgent(options), https: new ProxiedHttpsAgent(options) };
}
