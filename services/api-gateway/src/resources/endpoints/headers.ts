import { REDACTED } from "@herald/contracts";
import { destinationOrigin } from "@herald/contracts/destinations";
import { endpointHeadersContext, type PrismaClient, type SecretBox } from "@herald/db";
import type { Logger } from "@herald/runtime";
import { invalid } from "../../http/errors.ts";

/**
 * An endpoint's custom headers are write-only, like its signing secret: their values often
 * are tokens. The row keeps the names in `headers` (each value '') and the whole map sealed in
 * `headers_sealed`; the API shows each value as `[redacted]`; the dispatcher passes the sealed
 * map to the sender, which alone opens it. Rows stored before sealing hold the values in
 * `headers` until sealLegacyHeaders seals them.
 */
type Stored = { id: string; headers: unknown; headersSealed: string | null };

/** What the row stores for `headers`. */
export function sealHeaders(secrets: SecretBox, endpointId: string, headers: Record<string, string>) {
  const names = Object.fromEntries(Object.keys(headers).map((name) => [name, ""]));
  const sealed = Object.keys(headers).length
    ? secrets.seal(JSON.stringify(headers), endpointHeadersContext(endpointId))
    : null;
  return { headers: names, headersSealed: sealed };
}

/** The endpoint's header values: opened, or as stored before sealing. */
export function openHeaders(secrets: SecretBox, e: Stored): Record<string, string> {
  if (e.headersSealed) return JSON.parse(secrets.open(e.headersSealed, endpointHeadersContext(e.id)));
  return (e.headers ?? {}) as Record<string, string>;
}

/** `sent` as an update's `headers`: a value of exactly `[redacted]` keeps the current one. */
export function keepRedacted(sent: Record<string, string>, current: Record<string, string>) {
  return Object.fromEntries(
    Object.entries(sent).map(([name, value]) => [
      name,
      value === REDACTED && current[name] !== undefined ? current[name] : value,
    ]),
  );
}

/**
 * Saved header values go only where they were set for: a new URL on another origin (scheme,
 * host, port) needs them sent again, in the clear, or whoever may edit the endpoint could
 * point it at their own server and receive them.
 */
export function checkHeadersFollow(
  found: { url: string; headers: unknown },
  url: string,
  sent: Record<string, string> | undefined,
): void {
  const saved = Object.keys((found.headers ?? {}) as object);
  if (!saved.length || destinationOrigin(new URL(url)) === destinationOrigin(new URL(found.url))) return;
  const kept = sent ? Object.keys(sent).find((name) => sent[name] === REDACTED) : saved[0];
  if (kept === undefined) return;
  throw invalid(
    sent ? `headers[${kept}]` : "headers",
    "The URL moves to another origin: send the custom headers' values again with it (a saved value goes only where it was set for).",
  );
}

/** As the API shows them: the names, each value `[redacted]`. */
export const shownHeaders = (headers: unknown) =>
  Object.fromEntries(Object.keys((headers ?? {}) as object).map((name) => [name, REDACTED]));

/** Seals the header values of rows stored before sealing, a batch at a time; at gateway start. */
export async function sealLegacyHeaders(prisma: PrismaClient, secrets: SecretBox, logger: Logger) {
  let sealed = 0;
  for (;;) {
    const rows = await prisma.$queryRaw<Stored[]>`
      SELECT id, headers, headers_sealed AS "headersSealed" FROM endpoints
      WHERE headers_sealed IS NULL AND headers <> '{}'::jsonb LIMIT 200`;
    if (!rows.length) break;
    for (const row of rows) {
      const values = row.headers as Record<string, string>;
      const { headers, headersSealed } = sealHeaders(secrets, row.id, values);
      // Only if no one changed it meanwhile: a newer write is sealed already.
      await prisma.endpoint.updateMany({
        where: { id: row.id, headersSealed: null },
        data: { headers, headersSealed },
      });
    }
    sealed += rows.length;
  }
  if (sealed)
    logger.info({ endpoints: sealed }, "sealed the custom header values of endpoints stored before");
}
