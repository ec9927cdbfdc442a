import { randomUUID } from "node:crypto";

/**
 * Events sent at a steady rate, each as the SDK sends it: with an Idempotency-Key, retried with
 * that key after a `503` or a `409` that says when (waiting its Retry-After) or a failed
 * connection, until it is accepted. What clients saw on the way is counted: every answer
 * that was not a `201`, by status (or error code), and when each event was accepted.
 */
export type SteadyLoad = {
  /** Ids of the events accepted, with the time each was. */
  accepted: { id: string; at: number }[];
  /** Answers other than 201, by status or network error. */
  refused: Map<string, number>;
  /** Stops sending new events and waits for those under way to be accepted (or given up). */
  stop(): Promise<void>;
  /** Events given up on: refused with something other than 503, or not accepted within a minute. */
  lost: string[];
};

const GIVE_UP_MS = 60_000;

export function startSteadyLoad(
  url: string,
  key: string,
  body: (n: number) => unknown,
  perSecond: number,
): SteadyLoad {
  const accepted: SteadyLoad["accepted"] = [];
  const refused = new Map<string, number>();
  const lost: string[] = [];
  const underWay = new Set<Promise<void>>();
  const count = (what: string) => refused.set(what, (refused.get(what) ?? 0) + 1);
  let n = 0;

  async function sendOne(i: number): Promise<void> {
    const idempotencyKey = randomUUID();
    const giveUpAt = Date.now() + GIVE_UP_MS;
    while (Date.now() < giveUpAt) {
      let waitMs = 500;
      try {
        const res = await fetch(`${url}/v3/events`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": idempotencyKey,
          },
          body: JSON.stringify(body(i)),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.status === 201) {
          accepted.push({ id: JSON.parse(text).id, at: Date.now() });
          return;
        }
        const retryAfter = res.headers.get("retry-after");
        count(res.status === 409 ? `409 ${JSON.parse(text).error?.code}` : String(res.status));
        if (res.status !== 503 && !(res.status === 409 && retryAfter !== null)) {
          lost.push(`${res.status} ${text.slice(0, 300)}`);
          return;
        }
        waitMs = Number(retryAfter ?? 1) * 1000;
      } catch (err) {
        const e = err as { cause?: { code?: string }; name?: string };
        count(e.cause?.code ?? e.name ?? "error");
      }
      await new Promise((r) => setTimeout(r, waitMs));
    }
    lost.push(`event ${i}: not accepted within ${GIVE_UP_MS / 1000} s`);
  }

  const timer = setInterval(() => {
    const sending = sendOne(n++);
    underWay.add(sending);
    void sending.finally(() => underWay.delete(sending));
  }, 1000 / perSecond);

  return {
    accepted,
    refused,
    lost,
    async stop() {
      clearInterval(timer);
      while (underWay.size) await Promise.all([...underWay]);
    },
  };
}
