import { describe, expect, it } from "vitest";
import { blockedLiteral, guardedLookup, isBlockedAddress, resolveGuarded } from "./destinations.ts";

describe("destinations", () => {
  it.each([
    "127.0.0.1",
    "127.1.2.3",
    "10.0.0.5",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fe80::1",
    "fd00:ec2::254",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "::ffff:7f00:1",
    "::ffff:a9fe:a9fe",
  ])("refuses %s", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8"])(
    "allows %s",
    (address) => {
      expect(isBlockedAddress(address)).toBe(false);
    },
  );

  // Ranges that embed an IPv4 address a NAT64 gateway, a 6to4 or Teredo relay, or the host may
  // unwrap: each with 127.0.0.1 or 169.254.169.254 inside, as an attacker would write them.
  it.each([
    ["NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1::7f00:1"],
    ["NAT64 well-known 64:ff9b::/96", "64:ff9b::a9fe:a9fe"],
    ["6to4 2002::/16", "2002:7f00:1::1"],
    ["6to4 2002::/16, metadata", "2002:a9fe:a9fe::"],
    ["Teredo 2001::/32", "2001:0:4136:e378:8000:63bf:80ff:fffe"],
    ["IPv4-compatible ::/96", "::127.0.0.1"],
    ["IPv4-compatible ::/96, hex", "::a9fe:a9fe"],
    ["IPv4-translated ::ffff:0:0:0/96", "::ffff:0:7f00:1"],
    ["IPv4-translated ::ffff:0:0:0/96, dotted", "::ffff:0:169.254.169.254"],
    ["site-local fec0::/10", "fec0::1"],
    ["site-local fec0::/10, upper end", "feff::1"],
    ["benchmarking 2001:2::/48", "2001:2::1"],
    ["ORCHID 2001:10::/28", "2001:10::1"],
  ])("refuses %s (%s)", (_range, address) => {
    expect(isBlockedAddress(address)).toBe(true);
    expect(blockedLiteral(new URL(`http://[${address}]/hook`))).not.toBeNull();
  });

  it.each([
    "2001:4860:4860::8888",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "64:ff9b:2::1",
    "2003::1",
    "::ffff:1.1.1.1",
    "::ffff:101:101",
  ])("allows public %s beside those ranges", (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it("spots refused IP literals in URLs, IPv6 in brackets too", () => {
    expect(blockedLiteral(new URL("http://127.0.0.1:8080/x"))).toBe("127.0.0.1");
    expect(blockedLiteral(new URL("http://[::1]/x"))).toBe("::1");
    expect(blockedLiteral(new URL("https://example.com/x"))).toBeNull();
    expect(blockedLiteral(new URL("https://8.8.8.8/x"))).toBeNull();
  });

  it("refuses a hostname that resolves to a private address", async () => {
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup("localhost", {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe("HERALD_BLOCKED_DESTINATION");
  });
});

describe("resolveGuarded: the address a transport beyond HTTP connects to", () => {
  it("refuses a private literal or a name that resolves to one, unless private destinations are allowed", async () => {
    await expect(resolveGuarded("127.0.0.1", false)).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
    await expect(resolveGuarded("[::1]", false)).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
    await expect(resolveGuarded("localhost", false)).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
    expect(await resolveGuarded("localhost", true)).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(await resolveGuarded("8.8.8.8", false)).toBe("8.8.8.8");
  });

  it("fails a name that does not resolve as DNS does", async () => {
    await expect(resolveGuarded("no-such-host.invalid", false)).rejects.toMatchObject({ code: "ENOTFOUND" });
  });
});
