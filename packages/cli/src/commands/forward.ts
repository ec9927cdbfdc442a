/**
 * What `herald listen` does with each request the gateway sends down: POST it to the local
 * server, headers and body as signed, and bring back the answer (its body up to 64 KiB, what
 * the gateway reads). A local server that cannot be reached or does not answer in time is a
 * 502 whose body says why: the attempt records it like any endpoint's failure.
 */
export type Relayed = { id: number; headers: Record<string, string>; body: string };
export type Forwarded = {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
  /** Why the local server gave no answer, when it did not. */
  error?: string;
};

const BODY_MAX = 64 * 1024;
const TIMEOUT_MS = 30_000;
/** Hop-by-hop and framing headers: fetch sets its own. */
const SKIP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length"]);

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
  return Buffer.concat(chunks).subarray(0, BODY_MAX).toString("utf8");
}

export async function forward(target: string, request: Relayed): Promise<Forwarded> {
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
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const body = await readCapped(res);
    return {
      status: res.status,
      headers: Object.fromEntries(res.headers),
      body,
      ms: Math.round(performance.now() - started),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === "TimeoutError"
        ? `no answer within ${TIMEOUT_MS / 1000} s`
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
