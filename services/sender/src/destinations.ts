import { type LookupAddress, lookup } from "node:dns";
import { BlockList, isIP } from "node:net";

/**
 * SSRF guard. A webhook URL is the customer's to choose, so it must not reach Herald's own
 * network: loopback, private, link-local (cloud metadata at 169.254.169.254 included),
 * carrier-grade NAT, multicast, reserved and documentation ranges are refused. The check runs
 * on the address actually connected to (in the DNS lookup the socket uses), so a hostname
 * that resolves to 127.0.0.1 is refused as surely as the literal.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  blocked.addSubnet(net, prefix, "ipv4");
}
// IPv6, with every range that embeds an IPv4 address a gateway or the host may unwrap into
// one (NAT64, 6to4, Teredo, IPv4-compatible and -translated): a public-looking IPv6 address
// can carry 127.0.0.1 or 169.254.169.254 through them.
for (const [net, prefix] of [
  ["::", 96], // unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d
  ["::ffff:0:0:0", 96], // IPv4-translated (SIIT)
  ["64:ff9b::", 96], // NAT64, well-known prefix
  ["64:ff9b:1::", 48], // NAT64, local-use prefix
  ["100::", 64], // discard-only
  ["2001::", 32], // Teredo
  ["2001:2::", 48], // benchmarking
  ["2001:10::", 28], // ORCHID
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed on some networks)
  ["ff00::", 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, "ipv6");
}

/** The 16 bytes of an IPv6 address (valid per isIP), `::` expanded and a dotted tail read. */
function ipv6Bytes(address: string): number[] {
  let text = address.split("%")[0]!.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  const tail: number[] = [];
  if (dotted) {
    tail.push(...dotted.slice(1).map(Number));
    text = text.slice(0, dotted.index);
    if (!text.endsWith("::")) text = text.slice(0, -1);
  }
  const [head, rest] = text.includes("::") ? text.split("::") : [text, undefined];
  const groups = (part: string | undefined) =>
    part
      ? part
          .split(":")
          .filter(Boolean)
          .map((g) => Number.parseInt(g, 16))
      : [];
  const before = groups(head);
  const after = groups(rest);
  const groupCount = 8 - tail.length / 2;
  const middle = rest === undefined ? [] : Array(groupCount - before.length - after.length).fill(0);
  const words = [...before, ...middle, ...after].slice(0, groupCount);
  return [...words.flatMap((w) => [w >> 8, w & 0xff]), ...tail];
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  // IPv4-mapped (::ffff:a.b.c.d, also written ::ffff:7f00:1): the IPv4 address's own rules.
  const bytes = ipv6Bytes(address);
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
    return blocked.check(bytes.slice(12).join("."), "ipv4");
  }
  return blocked.check(address, "ipv6");
}

export class BlockedDestinationError extends Error {
  readonly code = "HERALD_BLOCKED_DESTINATION";
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, a private or reserved address`);
  }
}

/** The URL's host, when it is an IP literal that is refused. */
export function blockedLiteral(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return isIP(host) && isBlockedAddress(host) ? host : null;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A drop-in for dns.lookup that refuses blocked addresses; used by the HTTP agent's sockets. */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number },
  callback: LookupCallback,
): void {
  lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isBlockedAddress(a.address));
    if (bad) return callback(new BlockedDestinationError(hostname, bad.address) as NodeJS.ErrnoException, []);
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}

/**
 * The address to connect to for `host`, as the guard allows it: for the transports beyond HTTP,
 * which connect to what this returns (a literal is checked as it is). With `allowPrivate`, any.
 */
export async function resolveGuarded(host: string, allowPrivate: boolean): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare)) {
    if (!allowPrivate && isBlockedAddress(bare)) throw new BlockedDestinationError(host, bare);
    return bare;
  }
  const addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
    lookup(bare, { all: true }, (err, found) => (err ? reject(err) : resolve(found))),
  );
  const bad = allowPrivate ? undefined : addresses.find((a) => isBlockedAddress(a.address));
  if (bad) throw new BlockedDestinationError(host, bad.address);
  const first = addresses[0];
  if (!first) throw Object.assign(new Error(`${host} has no address`), { code: "ENOTFOUND" });
  return first.address;
}
