import { describe, expect, it } from "vitest";
import { blockedLiteral, guardedLookup, isBlockedAddress } from "./destinations.ts";

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
  ])("refuses %s", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(["93.184.216.34", "8.8.8.8", "172.32.0.1", "2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8"])(
    "allows %s",
    (address) => {
      expect(isBlockedAddress(address)).toBe(false);
    },
  );

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
