import got from "got";
import { describe, expect, it } from "vitest";
import { guardedLookup } from "./destinations.ts";
import { TokenCache } from "./tokens.ts";

const config = (token_url: string) => ({ token_url, client_id: "a", client_secret: "b" });

describe("OAuth2 tokens and the SSRF guard", () => {
  it("refuses a token URL at a private address, literal or resolved, unless private destinations are allowed", async () => {
    const client = got.extend({ dnsLookup: guardedLookup as never, retry: { limit: 0 } });
    const tokens = new TokenCache();
    await expect(
      tokens.token("ep_1", config("http://127.0.0.1:9/token"), client, false, false),
    ).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
    await expect(
      tokens.token("ep_1", config("http://localhost:9/token"), client, false, false),
    ).rejects.toMatchObject({
      code: "HERALD_BLOCKED_DESTINATION",
    });
  });
});
