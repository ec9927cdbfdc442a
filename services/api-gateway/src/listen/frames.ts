/**
 * The frames of a `herald listen` socket, JSON text. Down (gateway to CLI):
 * `{ type: "ready", endpoint, secret }` once, then `{ type: "request", id, headers, body,
 * timeout_ms }` for each attempt (`timeout_ms`: how long its sender waits for the answer). Up: `{ type: "response", id, status, headers?, body? }` for each request, what
 * the local server answered. Anything else up is ignored: a request without its answer in time
 * is an attempt that timed out.
 */
export type ClientFrame = { id: number; status: number; headers: Record<string, string>; body: string };

/** A response body is read up to 64 KiB (the attempt keeps its first 4 KiB, as for any endpoint). */
export const RESPONSE_BODY_MAX = 64 * 1024;

export function parseClientFrame(text: string): ClientFrame | null {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return null;
  }
  if (!frame || typeof frame !== "object") return null;
  const f = frame as Record<string, unknown>;
  if (f.type !== "response" || !Number.isSafeInteger(f.id)) return null;
  const status = Number(f.status);
  if (!Number.isInteger(status) || status < 100 || status > 599) return null;
  const headers: Record<string, string> = {};
  if (f.headers && typeof f.headers === "object")
    for (const [k, v] of Object.entries(f.headers as Record<string, unknown>).slice(0, 100))
      if (typeof v === "string") headers[k.toLowerCase()] = v.slice(0, 4096);
  const body = typeof f.body === "string" ? f.body.slice(0, RESPONSE_BODY_MAX) : "";
  return { id: f.id as number, status, headers, body };
}
