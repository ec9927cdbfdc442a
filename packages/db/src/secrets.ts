import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Endpoint signing secrets are stored encrypted with AES-256-GCM under ENCRYPTION_KEY
 * (32 bytes, base64 or hex; read by `ConfigReader.encryptionKey`). Stored form: `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 */
export type SecretBox = {
  seal(plain: string): string;
  open(sealed: string): string;
};

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error("encryption key must be 32 bytes");
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v1", iv, cipher.getAuthTag(), body]
        .map((p) => (typeof p === "string" ? p : p.toString("base64url")))
        .join(".");
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== "v1" || !iv || !tag || body === undefined)
        throw new Error("unrecognized sealed secret");
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
        "utf8",
      );
    },
  };
}
