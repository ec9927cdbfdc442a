/**
 * What `herald listen` does with each request the gateway sends down: POST it to the local
 * server, headers and body as signed, and bring back the answer (its body's first 4 KiB, what
 * the attempt keeps). A local server that cannot be reached or does not answer within the
 * attempt's time is a 502 whose body says why: the attempt records it like any endpoint's
 * failure.
 */
export type Relayed = { id: number; headers: Record<string, string>; body: string; timeout_ms?: number };
export type Forwarded = {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
  /** Why the local server gave no answer, when it did not. */
  error?: string;
};

/**
 * What goes back up, at most: the attempt keeps the body's first 4 KiB, and the whole frame
 * must stay well under the gateway's frame limit (128 KiB) however the JSON escapes it.
 */
const BODY_MAX = 4096;
const HEADERS_MAX = 50;
const HEADER_VALUE_MAX = 1024;
/** When the gateway does not say how long the attempt waits. */
const TIMEOUT_MS = 15_000;
/** Hop-by-hop and framing headers: fetch sets its own. */
const SKIP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length"]);

/** The first BODY_MAX bytes, as text (invalid UTF-8 replaced), cut to BODY_MAX characters. */
async function readCapped(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < BODY_MAX) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  return Buffer.concat(chunks).subarray(0, BODY_MAX).toString("utf8").slice(0, BODY_MAX);
}

function capHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries(
    [...headers]
      .filter(([name]) => name.length <= 256)
      .slice(0, HEADERS_MAX)
      .map(([name, value]) => [name, value.slice(0, HEADER_VALUE_MAX)]),
  );
}

/** POSTs the request to `target` within the attempt's time; `stopped` cuts it short. */
export async function forward(target: string, request: Relayed, stopped: AbortSignal): Promise<Forwarded> {
  const timeoutMs =
    Number.isSafeInteger(request.timeout_ms) && request.timeout_ms! > 0 ? request.timeout_ms! : TIMEOUT_MS;
  const started = performance.now();
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => !SKIP.has(name.toLowerCase())),
  );
  try {
    const res = await fetch(target, {
      method: "POST",
      headers,
      body: request.body,
      redirect: "manual",
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stopped]),
    });
    const body = await readCapped(res);
    return {
      status: res.status,
      headers: capHeaders(res.headers),
      body,
      ms: Math.round(performance.now() - started),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === "TimeoutError"
        ? `no answer within ${timeoutMs / 1000} s`
        : (cause?.code ?? cause?.message ?? (err as Error).message);
    return {
      status: 502,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: `herald listen could not deliver to ${target}: ${why}`,
      ms: Math.round(performance.now() - started),
      error: why,
    };
  }
}
