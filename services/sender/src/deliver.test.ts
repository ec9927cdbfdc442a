import { describe, expect, it } from "vitest";
import { parseRetryAfter, spanUrl } from "./deliver.ts";
import { errorKind } from "./errorKind.ts";

describe("attempt failures", () => {
  it.each([
    [{ code: "ETIMEDOUT" }, "timeout"],
    [{ name: "TimeoutError", code: "" }, "timeout"],
    [{ code: "ENOTFOUND" }, "dns_error"],
    [{ code: "EAI_AGAIN" }, "dns_error"],
    [{ code: "ECONNREFUSED" }, "connection_error"],
    [{ code: "ECONNRESET" }, "connection_error"],
    [{ code: "DEPTH_ZERO_SELF_SIGNED_CERT" }, "tls_error"],
    [{ code: "ERR_TLS_CERT_ALTNAME_INVALID" }, "tls_error"],
    [{ code: "HERALD_BLOCKED_DESTINATION" }, "blocked_destination"],
  ])("classifies %j as %s", (err, kind) => {
    expect(errorKind(err)).toBe(kind);
  });

  it("reads Retry-After as seconds or a date", () => {
    expect(parseRetryAfter("120")).toBe(120_000);
    expect(parseRetryAfter(new Date(Date.now() + 30_000).toUTCString(), Date.now())).toBeGreaterThan(28_000);
    expect(parseRetryAfter("soon")).toBeNull();
    expect(parseRetryAfter(undefined)).toBeNull();
  });
});

describe("the URL a trace shows", () => {
  it.each([
    [
      "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/XyZ12abcDEF34ghiJKL56mno",
      "https://hooks.slack.com/services/{redacted}/{redacted}/{redacted}",
    ],
    [
      "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789-abcdefghijklmnopqrstuvwxyzABCDEF",
      "https://discord.com/api/webhooks/{redacted}/{redacted}",
    ],
    [
      "https://user:hunter2@example.com:8443/hooks/orders?token=s3cr3t",
      "https://example.com:8443/hooks/orders",
    ],
    ["https://example.com/webhooks/herald", "https://example.com/webhooks/herald"],
    ["http://example.com/", "http://example.com/"],
  ])("scrubs %s", (url, shown) => {
    expect(spanUrl(new URL(url))).toBe(shown);
  });
});
