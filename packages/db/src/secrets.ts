import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets at rest (endpoint signing secrets and custom header values, idempotent replies) are
 * sealed with AES-256-GCM under ENCRYPTION_KEY (32 bytes, base64 or hex; read by
 * `ConfigReader.encryptionKey`).
 *
 * Stored form `v2.<iv>.<tag>.<ciphertext>`, each unpadded base64url: a 12-byte IV, a 16-byte
 * tag, and as associated data the `context` the value belongs to (`endpoint:<id>:secret`), so
 * a sealed value copied into another row, or another column, does not open there. `v1` values,
 * sealed before contexts, still open (without one); each is sealed as v2 when next written.
 */
export type SecretBox = {
  seal(plain: string, context: string): string;
  open(sealed: string, context: string): string;
};

const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The bytes of an unpadded base64url part, refusing anything Node's lenient decoder would skip. */
function part(text: string, bytes?: number): Buffer {
  if (!BASE64URL.test(text) || text.length % 4 === 1) throw new Error("malformed sealed secret");
  const decoded = Buffer.from(text, "base64url");
  if (decoded.toString("base64url") !== text) throw new Error("malformed sealed secret");
  if (bytes !== undefined && decoded.length !== bytes) throw new Error("malformed sealed secret");
  return decoded;
}

/** The context of an endpoint's signing secret (current and previous alike). */
export const endpointSecretContext = (endpointId: string) => `endpoint:${endpointId}:secret`;
/** The context of an endpoint's custom header values. */
export const endpointHeadersContext = (endpointId: string) => `endpoint:${endpointId}:headers`;
/** An endpoint's authentication (mutual TLS key, OAuth2 client secret), sealed as one JSON document. */
export const endpointAuthContext = (endpointId: string) => `endpoint:${endpointId}:auth`;

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error("encryption key must be 32 bytes");
  return {
    seal(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return ["v2", ...[iv, cipher.getAuthTag(), body].map((p) => p.toString("base64url"))].join(".");
    },
    open(sealed, context) {
      const parts = sealed.split(".");
      const [version, iv, tag, body] = parts;
      if (parts.length !== 4 || (version !== "v1" && version !== "v2") || !iv || !tag || body === undefined)
        throw new Error("unrecognized sealed secret");
      const decipher = createDecipheriv("aes-256-gcm", key, part(iv, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAuthTag(part(tag, TAG_BYTES));
      if (version === "v2") decipher.setAAD(Buffer.from(context, "utf8"));
      return Buffer.concat([decipher.update(part(body)), decipher.final()]).toString("utf8");
    },
  };
}
