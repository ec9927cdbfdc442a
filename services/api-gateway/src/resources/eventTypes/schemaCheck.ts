import type { Account, Deps } from "../../context.ts";
import { ApiError } from "../../http/errors.ts";
import type { Violation } from "../../schemas/budget.ts";
import { NOT_OBJECT } from "../../schemas/compile.ts";
import { type Requester, SchemaQueueFull, SchemaTooCostly } from "../../schemas/pool.ts";

/**
 * Event types' JSON Schemas as the API sees them: each is checked on the schema workers
 * (schemas/pool.ts) when it is created or changed, so a bad schema is a 400 then, and every
 * event of a type with a schema is checked there too, within SCHEMA_VALIDATE_TIMEOUT.
 */

/**
 * Who waits on the schema workers: the account, through its API or one of its customers'
 * portal sessions, so that one customer's portal cannot fill the account's queue.
 */
export const schemaRequester = (account: Account): Requester =>
  account.via === "portal" && account.session
    ? { account: account.id, portalSession: account.session.id }
    : account.id;

const queueFull = () =>
  new ApiError(
    429,
    "rate_limit_error",
    "schema_checks_queued",
    "This account has too many schema checks waiting; retry shortly.",
    undefined,
    undefined,
    { "Retry-After": "1" },
  );

/** The schema's problems (none when valid) and its example payload. */
export async function schemaCheck(
  deps: Deps,
  requester: Requester,
  schema: unknown,
): Promise<{ problems: Violation[]; example: unknown }> {
  try {
    return await deps.schemas.check(requester, schema);
  } catch (err) {
    if (err instanceof SchemaQueueFull) throw queueFull();
    throw err;
  }
}

/** Refuses a schema an event type cannot take, with a 400 that lists each problem. */
export async function assertSchema(deps: Deps, requester: Requester, schema: unknown, param = "schema") {
  const { problems } = await schemaCheck(deps, requester, schema);
  if (!problems.length) return;
  const message =
    problems[0]?.message === NOT_OBJECT
      ? `schema ${NOT_OBJECT}.`
      : `schema is not a valid JSON Schema: ${problems.map((p) => `${p.path} ${p.message}`).join("; ")}`;
  throw new ApiError(400, "invalid_request_error", "invalid_schema", message, param, problems);
}

/** Refuses `data` that does not match its type's schema (422), or that cannot be checked in time. */
export async function assertMatches(
  deps: Deps,
  requester: Requester,
  type: { id: string; name: string; schema: unknown; updatedAt: Date },
  data: unknown,
): Promise<void> {
  let reply: Awaited<ReturnType<Deps["schemas"]["validate"]>>;
  try {
    reply = await deps.schemas.validate(
      requester,
      `${type.id}:${type.updatedAt.getTime()}`,
      type.schema,
      data,
    );
  } catch (err) {
    if (err instanceof SchemaTooCostly) throw tooCostly(type.name, `checking data against it ${err.message}`);
    if (err instanceof SchemaQueueFull) throw queueFull();
    throw err;
  }
  if (reply.schemaProblems.length) {
    const listed = reply.schemaProblems.map((p) => `${p.path} ${p.message}`).join("; ");
    throw tooCostly(type.name, `the schema cannot be used: ${listed}`);
  }
  if (reply.violations.length) {
    const more = reply.more ? `; and ${reply.more} more` : "";
    const listed = reply.violations.map((v) => `${v.path} ${v.message}`).join("; ") + more;
    throw new ApiError(
      422,
      "invalid_request_error",
      "schema_validation_failed",
      `data does not match the schema of '${type.name}': ${listed}.`,
      "data",
      reply.violations,
    );
  }
}

const tooCostly = (name: string, why: string) =>
  new ApiError(
    422,
    "invalid_request_error",
    "schema_too_costly",
    `The event was not accepted: ${why} (event type '${name}'). Simplify the schema with POST /v3/event-types/${name}.`,
    "data",
  );
