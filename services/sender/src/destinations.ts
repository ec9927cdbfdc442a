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
for (const [net, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  blocked.addSubnet(net, prefix, "ipv6");
}

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, "ipv4");
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
