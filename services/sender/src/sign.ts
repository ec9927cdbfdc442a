import { createHmac } from "node:crypto";

/**
 * Standard Webhooks signatures: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`,
 * keyed by the base64-decoded part of the `whsec_` secret. During a rotation each active
 * secret signs, space-separated, so receivers on either secret verify.
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets.map((s) => sign(s, id, timestamp, body)).join(" ");
}
