import { type Owner, TransformationError } from "@herald/transform";
import type { Account, Deps } from "../../context.ts";
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
 * Takes one of `account`'s compiles or try-its (TRANSFORMATION_RATE_LIMIT_PER_SECOND, a portal
 * session's apart from its account's), or refuses the request with a 429 at `transformation`:
 * the same request without one would go through.
 */
export function takeTransformationTurn(deps: Pick<Deps, "transformLimiter">, account: Account): void {
  const retryAfter = deps.transformLimiter.tryTake(transformOwner(account));
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
 * The 429 for a TransformationError that says the workers were too busy to take the run (its
 * owner's queue full, or its wait for a worker over): Herald's capacity, not the code's fault,
 * so not a 400 nor a failed try-it. Null for any other error. (`cause` compared as a string:
 * "busy" is newer than some builds of @herald/transform.)
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
  try {
    await compileForSave(deps, transformParty(account), source);
  } catch (err) {
    const busy = transformationsBusy(err);
    if (busy) throw busy;
    if (err instanceof TransformationError)
      throw invalid("transformation", err.message, "transformation_invalid");
    throw err;
  }
  return source;
}

/**
 * Compiles `source`; a compile that ran past its budget is tried once more before the save is
 * refused: on a busy machine a budget missed once may be the load's doing, not the code's (a
 * top level that loops misses it again).
 */
async function compileForSave(deps: Pick<Deps, "transforms">, owner: Owner, source: string): Promise<void> {
  try {
    await deps.transforms.compile(owner, source);
  } catch (err) {
    if (!(err instanceof TransformationError && err.cause === "timeout")) throw err;
    await deps.transforms.compile(owner, source);
  }
}
