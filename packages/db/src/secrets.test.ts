import { createCipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox, endpointSecretContext } from "./secrets.ts";

describe("secret box", () => {
  const key = randomBytes(32);
  const box = createSecretBox(key);
  const here = endpointSecretContext("ep_1");

  /** A value as sealed before contexts: `v1`, no associated data. */
  function sealV1(plain: string, tagBytes = 16): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const tag = cipher.getAuthTag().subarray(0, tagBytes);
    return ["v1", iv, tag, body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
  }

  it("round-trips and never stores the plain text", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const sealed = box.seal(secret, here);
    expect(sealed).toMatch(/^v2\./);
    expect(sealed).not.toContain("MfKQ9r8G");
    expect(sealed).not.toBe(box.seal(secret, here));
    expect(box.open(sealed, here)).toBe(secret);
  });

  it("opens a value only in the context it was sealed for", () => {
    const sealed = box.seal("whsec_abc", here);
    expect(() => box.open(sealed, endpointSecretContext("ep_2"))).toThrow();
    expect(() => box.open(sealed, "endpoint:ep_1:headers")).toThrow();
  });

  it("still opens values sealed before contexts", () => {
    expect(box.open(sealV1("whsec_old"), here)).toBe("whsec_old");
  });

  it("refuses a truncated tag, which GCM would otherwise check on its first bytes only", () => {
    for (const bytes of [4, 8, 12]) expect(() => box.open(sealV1("whsec_old", bytes), here)).toThrow();
    const [v, iv, tag, body] = box.seal("whsec_abc", here).split(".");
    const short = Buffer.from(tag!, "base64url").subarray(0, 4).toString("base64url");
    expect(() => box.open([v, iv, short, body].join("."), here)).toThrow();
  });

  it("refuses parts Node's lenient base64 decoder would read anyway", () => {
    const sealed = box.seal("whsec_abc", here);
    const [v, iv, tag, body] = sealed.split(".");
    for (const bad of [
      [v, `${iv}!`, tag, body],
      [v, iv, `${tag}==`, body],
      [v, iv, tag, `${body} `],
      [v, iv, tag, body, "extra"],
    ])
      expect(() => box.open(bad.join("."), here), bad.join(".")).toThrow();
  });

  it("refuses tampered ciphertext and a different key", () => {
    const sealed = box.seal("whsec_abc", here);
    const parts = sealed.split(".");
    parts[3] = Buffer.from("tampered").toString("base64url");
    expect(() => box.open(parts.join("."), here)).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(sealed, here)).toThrow();
  });
});
