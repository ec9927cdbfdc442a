import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.ts";
import { parseNoProxy } from "./egress.ts";

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
