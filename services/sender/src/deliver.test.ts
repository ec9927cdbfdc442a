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

describe("DESTINATION_TYPES", () => {
  it("fails an attempt to a type turned off as blocked_destination, contacting nothing", async () => {
    const { randomBytes } = await import("node:crypto");
    const { createSecretBox, endpointSecretContext } = await import("@herald/db/secrets");
    const { deliver } = await import("./deliver.ts");
    const secrets = createSecretBox(randomBytes(32));
    const used: string[] = [];
    const outcome = await deliver(
      {
        attempt_id: "atmpt_1",
        delivery_id: "dlv_1",
        event_id: "evt_1",
        endpoint_id: "ep_1",
        app_id: "app_1",
        attempt_number: 1,
        url: "amqp://127.0.0.1:5672/?routing_key=orders",
        headers: {},
        secrets: [secrets.seal(`whsec_${randomBytes(32).toString("base64")}`, endpointSecretContext("ep_1"))],
        payload: '{"type":"invoice.paid","timestamp":"2026-11-27T00:00:00Z","data":{}}',
      },
      {
        secrets,
        agents: { of: () => ({}) as never, destroy() {} },
        timeoutMs: 1000,
        allowPrivate: true,
        userAgent: "test",
        destinationTypes: ["http", "s3"],
        transports: {
          of(type) {
            used.push(type);
            throw new Error("no transport may be used");
          },
        },
      },
    );
    expect(outcome).toMatchObject({ succeeded: false, error: "blocked_destination" });
    expect(outcome.response_body).toMatch(/amqp endpoints are turned off/);
    expect(used).toEqual([]);
  });
});
