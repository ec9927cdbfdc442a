import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSecretBox } from "./secrets.ts";

describe("secret box", () => {
  const box = createSecretBox(randomBytes(32));

  it("round-trips and never stores the plain text", () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const sealed = box.seal(secret);
    expect(sealed).not.toContain("MfKQ9r8G");
    expect(sealed).not.toBe(box.seal(secret));
    expect(box.open(sealed)).toBe(secret);
  });

  it("refuses tampered ciphertext and a different key", () => {
    const sealed = box.seal("whsec_abc");
    const parts = sealed.split(".");
    parts[3] = Buffer.from("tampered").toString("base64url");
    expect(() => box.open(parts.join("."))).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow();
  });
});
