/**
 * An attempt's request headers as Herald keeps and shows them: the value of a header that
 * looks like a credential is replaced by `[redacted]`, so a token an endpoint sends in its
 * custom headers is never stored with each attempt, nor shown in the portal. The endpoint's
 * own settings still hold it, and the receiver gets it as set.
 *
 * `webhook-signature` is Herald's proof that it sent the request: public, and kept so that an
 * attempt's recorded request can be verified.
 */
export const REDACTED = "[redacted]";

const EXACT = new Set(["authorization", "proxy-authorization", "cookie", "set-cookie"]);
const PARTS = /token|secret|key|password|auth|session|signature|cookie|credential/;
const PUBLIC = new Set(["webhook-signature"]);

export function isSensitiveHeader(name: string): boolean {
  const lower = name.toLowerCase();
  if (PUBLIC.has(lower)) return false;
  return EXACT.has(lower) || PARTS.test(lower);
}

/** `headers`, each credential-like value and each of `hidden` (an endpoint's own, write-only) redacted. */
export function redactHeaders(
  headers: Record<string, string>,
  hidden: Iterable<string> = [],
): Record<string, string> {
  const names = new Set([...hidden].map((n) => n.toLowerCase()));
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      isSensitiveHeader(name) || names.has(name.toLowerCase()) ? REDACTED : value,
    ]),
  );
}
