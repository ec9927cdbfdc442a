import { type Owner, TransformationError } from "@herald/transform";
import type { Account, Deps } from "../../context.ts";
import { type Answerable, requestDeadline } from "../../http/deadline.ts";
import { ApiError, invalid } from "../../http/errors.ts";
import type { Schema } from "../../http/route.ts";

/**
 * An endpoint's transformation (packages/transform): JavaScript defining `handler(webhook)`,
 * which the senders run before each attempt. The gateway compiles it when it is saved, so a
 * syntax error is a 400 naming its line then, not a failed attempt later, and runs it for the
 * try-it routes (transformationTest.ts).
 */

/** The most a transformation's source may be, in UTF-8 bytes: the database checks it too (migration 0023). */
export const TRANSFORMATION_MAX_BYTES = 65_536;

export const transformationField: Schema = {
  type: ["string", "null"],
  maxLength: TRANSFORMATION_MAX_BYTES,
  description:
    "JavaScript that reshapes each delivery: it defines `function handler(webhook)`, which receives `{ event_type, event_id, method, url, headers, payload }` (and Svix's `eventType`) and returns it changed: another `payload` (JSON, or a string sent as is), `headers`, `method` (`POST`, `PUT`, `PATCH`) or `url`, or `cancel: true` to skip the delivery (`cancelled`). At most 65,536 bytes (UTF-8); compiled when saved, a syntax error is `400 transformation_invalid` naming the line. Try it first with `POST /v3/endpoints/{id}/transformation/test`. Saves with a transformation and try-its have a rate of their own (5 a second by default, bursts of 10): past it, or with the workers too busy, `429` with `Retry-After`, at `transformation`. `null` removes it. See docs/transformations.md.",
};

/**
 * Who waits on the transformation workers: the account through its API, or one of its
 * customers' portal sessions, so that one customer's editor cannot fill the account's queue.
 */
export const transformOwner = (account: Account): string =>
  account.via === "portal" && account.session ? `${account.id}:portal:${account.session.id}` : account.id;

/** The same, as the workers share their time: a portal session's runs are its account's too. */
export const transformParty = (account: Account): Owner => ({
  account: account.id,
  owner: transformOwner(account),
});

/**
 * The rate buckets a compile or try-it of `account` takes a token of: the account's, and a
 * portal session's its own as well. Its own alone, each new session of one account would
 * bring a fresh allowance (sessions are not counted), and with it another queue of waiting runs.
 */
export const transformationBuckets = (account: Account): string[] => {
  const owner = transformOwner(account);
  // The account's last: should making room for a new session's push it out, it is put back.
  return owner === account.id ? [owner] : [owner, account.id];
};

/**
 * Takes one of `account`'s compiles or try-its (TRANSFORMATION_RATE_LIMIT_PER_SECOND, of each
 * of transformationBuckets), or refuses the request with a 429 at `transformation`: the same
 * request without one would go through.
 */
export function takeTransformationTurn(deps: Pick<Deps, "transformLimiter">, account: Account): void {
  const retryAfter = deps.transformLimiter.tryTakeEach(transformationBuckets(account));
  if (retryAfter)
    throw new ApiError(
      429,
      "rate_limit_error",
      "rate_limited",
      "Too many transformations saved or tried for now. Slow down and retry after the time in Retry-After.",
      "transformation",
      undefined,
      { "Retry-After": String(retryAfter) },
    );
}

/**
 * How many compiles and try-its may wait for the gateway's transformation workers. Each waiting
 * try-it holds its event's data and the input built of it, up to about 2 MiB (a compile, its
 * source: 64 KiB), so few wait: a portal session's (or the API's), an account's (its sessions
 * together, which nothing counts), and in all, 32 holding at most 64 MiB, within the gateway's
 * 160 MB heap beside requests' bodies (1 MiB each) and `herald listen`'s 32 MiB; one account
 * fills a quarter at most. Past them, 429 transformation_busy at once.
 */
export const TRANSFORMATION_QUEUES = { queuePerOwner: 4, queuePerAccount: 8, queueTotal: 32 } as const;

/**
 * How long a compile or try-it may wait for a worker (and so hold its source, event and input
 * on the gateway's heap) before it is refused as `transformation_busy`; sooner when its client
 * closes the connection (requestDeadline). The senders' runs wait within their attempt's time.
 */
export const TRANSFORMATION_WAIT_MS = 5000;

/**
 * The 429 for a TransformationError that says the workers were too busy to take the run (its
 * owner's, its account's or the whole pool's queue full, or its wait for a worker over or its
 * client gone): Herald's capacity, not the code's fault, so not a 400 nor a failed try-it. Null
 * for any other error. (`cause` compared as a string: "busy" is newer than some builds of
 * @herald/transform.)
 */
export function transformationsBusy(err: unknown): ApiError | null {
  if (!(err instanceof TransformationError && err.cause === "busy")) return null;
  return new ApiError(
    429,
    "rate_limit_error",
    "transformation_busy",
    "Herald's transformation workers are too busy to take this one now. Retry after the time in Retry-After.",
    "transformation",
    undefined,
    { "Retry-After": "1" },
  );
}

/** Refuses a source over TRANSFORMATION_MAX_BYTES. */
export function checkSize(source: string, param = "transformation"): string {
  const bytes = Buffer.byteLength(source, "utf8");
  if (bytes > TRANSFORMATION_MAX_BYTES)
    throw invalid(
      param,
      `transformation is ${bytes} bytes (UTF-8); at most ${TRANSFORMATION_MAX_BYTES}.`,
      "transformation_invalid",
    );
  return source;
}

/**
 * The transformation to save: checked and compiled (its top level run once, within the run's
 * budget), or null to remove it. A source that does not compile is a 400 at `transformation`
 * whose message names the cause and the line: `SyntaxError: unexpected token in expression:
 * ';' (line 2)`. Past the account's rate of compiles, or with the workers too busy to compile
 * it, a 429.
 */
export async function checkTransformation(
  deps: Pick<Deps, "transforms" | "transformLimiter">,
  account: Account,
  req: Answerable,
  source: string | null,
): Promise<string | null> {
  if (source === null) return null;
  checkSize(source);
  // A cheap first word: an empty or pasted-wrong source is refused here; one that names
  // `handler` without defining it fails its try-it run, saying so.
  if (!/\bhandler\b/.test(source))
    throw invalid(
      "transformation",
      "transformation must define function handler(webhook).",
      "transformation_invalid",
    );
  // Counted once its cheap checks pass: only a source that will be compiled costs the workers.
  takeTransformationTurn(deps, account);
  const wait = requestDeadline(req, TRANSFORMATION_WAIT_MS);
  try {
    await compileForSave(deps, transformParty(account), source, wait.signal);
  } catch (err) {
    const busy = transformationsBusy(err);
    if (busy) throw busy;
    if (err instanceof TransformationError)
      throw invalid("transformation", err.message, "transformation_invalid");
    throw err;
  } finally {
    wait.clear();
  }
  return source;
}

/**
 * Compiles `source`; a compile that ran past its budget is tried once more before the save is
 * refused: on a busy machine a budget missed once may be the load's doing, not the code's (a
 * top level that loops misses it again). Both wait for a worker within `signal`.
 */
async function compileForSave(
  deps: Pick<Deps, "transforms">,
  owner: Owner,
  source: string,
  signal: AbortSignal,
): Promise<void> {
  try {
    await deps.transforms.compile(owner, source, signal);
  } catch (err) {
    if (!(err instanceof TransformationError && err.cause === "timeout")) throw err;
    await deps.transforms.compile(owner, source, signal);
  }
}
