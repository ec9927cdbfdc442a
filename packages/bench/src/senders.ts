/**
 * How the load generator's jobs send: events POSTed to the gateway, by workers that go on until
 * the window ends (closed loop) or at a rate whatever the answers (open loop).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { eventBody } from "./apps.ts";
import { type Run, SOCKETS } from "./jobRun.ts";
import type { Gateway } from "./protocol.ts";
import type { Tracking } from "./tracker.ts";

let gateway: Gateway | null = null;

/** Where events go, as main said when it started the load generator (its `init`). */
export function setGateway(g: Gateway): void {
  gateway = g;
}

function eventsUrl(): { url: URL; headers: Record<string, string> } {
  if (!gateway) throw new Error("the load generator was not told where the gateway is");
  return {
    url: new URL("/v3/events", gateway.baseUrl),
    headers: { authorization: `Bearer ${gateway.apiKey}` },
  };
}

let seq = 0;
/** POSTs one event; its id once it got a 201, else null (counted as an error in `requests`). */
export async function sendEvent(
  run: Run,
  app: string,
  tracker: Tracking | null,
  requests = run.requests,
): Promise<string | null> {
  const { url, headers } = eventsUrl();
  try {
    const answer = await run.post(url, eventBody(app, seq++), headers);
    const at = run.clock();
    if (answer.status !== 201) {
      requests.fail(`${answer.status} ${answer.body}`);
      return null;
    }
    const id = (JSON.parse(answer.body) as { id: string }).id;
    requests.ok(at);
    tracker?.accept(id, at);
    return id;
  } catch (err) {
    requests.fail(String(err));
    return null;
  }
}

/** `n` workers each calling `step` until the window ends; a failed step backs off 10 ms. */
export async function loop(run: Run, n: number, step: () => Promise<boolean>): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (run.clock() < run.window.end) if (!(await step())) await sleep(10);
    }),
  );
}

/**
 * Calls `send` `rate` times a second until the window ends (or `count` calls were due), whatever
 * the answers. With all 64 sockets busy, a due call waits its turn (as it would in the agent's
 * queue); those still waiting when the window ends are dropped. Resolves then, with their number:
 * events the system did not take at the rate.
 */
export function paced(
  run: Run,
  rate: number,
  send: () => Promise<unknown>,
  count = Number.POSITIVE_INFINITY,
) {
  let waiting = 0;
  const fire = (): void => {
    void send().finally(() => {
      if (waiting > 0 && run.clock() < run.window.end) {
        waiting--;
        fire();
      }
    });
  };
  return new Promise<number>((resolve) => {
    const interval = 1000 / rate;
    let next = 0;
    let due = 0;
    const timer = setInterval(() => {
      for (const now = run.clock(); next <= now && next < run.window.end && due < count; next += interval) {
        due++;
        if (run.posting() < SOCKETS) fire();
        else waiting++;
      }
      if (run.clock() >= run.window.end) {
        clearInterval(timer);
        const notSent = waiting;
        waiting = 0;
        resolve(notSent);
      }
    }, 1);
  });
}
