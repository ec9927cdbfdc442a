import { describe, expect, it } from "vitest";
import { refusal } from "./refusals.ts";

const HOOK = "https://example.com/hook";
const post = (url: string) => ({ method: "POST", url });

describe("refusal", () => {
  it("lets an HTTP endpoint's request change its method and URL, to another origin too", () => {
    expect(refusal(HOOK, false, post(HOOK))).toBeNull();
    expect(refusal(HOOK, false, { method: "PUT", url: "https://other.example.org/v2?x=1" })).toBeNull();
    expect(refusal(new URL(HOOK), false, { method: "PATCH", url: HOOK })).toBeNull();
  });

  it("refuses a new method or URL where there is none: a destination beyond HTTP", () => {
    const redis = "redis://127.0.0.1:6379/0?stream=s";
    expect(refusal(redis, false, post(redis))).toBeNull();
    expect(refusal(redis, false, post("https://example.com/"))).toBe(
      "the transformation set `url`, which a redis endpoint has not: it may change only `payload` and `headers`",
    );
    expect(refusal("s3://bucket/prefix", false, { method: "PUT", url: "s3://bucket/prefix" })).toBe(
      "the transformation set `method`, which a s3 endpoint has not: it may change only `payload` and `headers`",
    );
  });

  it("refuses a new method or URL for a `herald listen` endpoint", () => {
    const listen = "herald-listen://ep_1";
    expect(refusal(listen, false, post(listen))).toBeNull();
    expect(refusal(listen, false, { method: "PUT", url: "https://example.com/" })).toBe(
      "the transformation set `method` and `url`, which a `herald listen` endpoint has not: it may change only `payload` and `headers`",
    );
  });

  it("refuses credentials in a new URL", () => {
    expect(refusal(HOOK, false, post("https://user:pw@example.com/hook"))).toBe(
      "the transformation set a `url` with credentials in it; send them in a header instead",
    );
    expect(refusal(HOOK, false, post("https://token@example.com/hook"))).toMatch(/credentials/);
  });

  it("keeps a destination's own URL, its credentials shown as [redacted], as it was", () => {
    // As stored: the user info sealed apart (redactUserInfo), read back as a user name.
    const stored = "redis://[redacted]@127.0.0.1:6379/0?stream=s";
    expect(refusal(stored, false, post(stored))).toBeNull();
  });

  it("keeps an OAuth2 endpoint's request on its origin: another path there, never another host or port", () => {
    expect(refusal(HOOK, true, { method: "PUT", url: "https://example.com/v2/hook?x=1" })).toBeNull();
    const moved =
      "the transformation moved the request to another origin, where the endpoint's OAuth2 token may not go";
    expect(refusal(HOOK, true, post("https://other.example.org/hook"))).toBe(moved);
    expect(refusal(HOOK, true, post("https://example.com:8443/hook"))).toBe(moved);
    expect(refusal(HOOK, true, post("http://example.com/hook"))).toBe(moved);
  });
});
