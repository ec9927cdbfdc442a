import { REDACTED, redactHeaders, webhookPayload } from "@herald/contracts";
import { newId } from "@herald/db";
import { refusal, TransformationError, type WebhookInput, webhookInput } from "@herald/transform";
import type { Account, Ctx, Deps } from "../../context.ts";
import { type Answerable, requestDeadline } from "../../http/deadline.ts";
import { invalid } from "../../http/errors.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { exampleOrNull } from "../../schemas/example.ts";
import { appRef, checkAppReach, resolveApp } from "../common.ts";
import { storedData } from "../events/send.ts";
import { shownAuth } from "./auth.ts";
import { findEndpoint } from "./crud.ts";
import { checkEndpointUrl, checkHeaders, endpointFields } from "./input.ts";
import {
  checkSize,
  TRANSFORMATION_MAX_BYTES,
  TRANSFORMATION_WAIT_MS,
  takeTransformationTurn,
  transformationsBusy,
  transformParty,
} from "./transformation.ts";

/**
 * Trying a transformation before it is saved: run on an event (an event type's example, or
 * one given) as the sender would run it, answering with the request that would be sent, or
 * the cancel, or the error with its line. Nothing is stored or sent. The handler's input is
 * built by @herald/transform's webhookInput, as the sender builds it, from the body Herald
 * would send. A saved endpoint's custom header values are write-only: the run sees each as
 * `[redacted]` (a try-it's code could copy one into the body it shows), and the answer shows
 * the endpoint's headers, and any that looks like a credential, redacted as attempts do.
 */
type EventInput = { type: string; data: Record<string, unknown> };
type TryBody = { transformation?: string; event_type?: string; event?: EventInput };
type UnsavedBody = TryBody & {
  app: string;
  transformation: string;
  url: string;
  headers?: Record<string, string>;
};

const tryFields: Record<string, Schema> = {
  event_type: {
    type: "string",
    minLength: 1,
    maxLength: 64,
    description: "Run it on this event type's example payload (its schema's, or `{}`). Send this or `event`.",
  },
  event: {
    type: "object",
    additionalProperties: false,
    required: ["type", "data"],
    properties: {
      type: { type: "string", minLength: 1, maxLength: 64 },
      data: { type: "object" },
    },
    description:
      "Run it on this event: its type and data, as `POST /v3/events` takes them (neither is checked against the type). Send this or `event_type`. In a form body, a JSON string.",
  },
};

const sourceField: Schema = { type: "string", minLength: 1, maxLength: TRANSFORMATION_MAX_BYTES };

const requestShown: Schema = {
  type: ["object", "null"],
  required: ["method", "url", "headers", "body"],
  properties: {
    method: { enum: ["POST", "PUT", "PATCH"] },
    url: { type: "string" },
    headers: {
      type: "object",
      additionalProperties: { type: "string" },
      description:
        "The headers the transformation's request carries besides Herald's own (`content-type`, `user-agent`, `webhook-id`, `webhook-timestamp`, `webhook-signature`, which sign `body`), names lower-cased. The endpoint's custom headers, and any that looks like a credential, show `[redacted]`, as in attempts.",
    },
    body: { type: "string", description: "The body that would be sent and signed." },
  },
  description: "The request that would be sent; null when cancelled or failed.",
};

export const transformationTestSchemas: Record<string, Schema> = {
  TransformationTest: {
    type: "object",
    required: ["object", "input", "cancelled", "request", "error"],
    properties: {
      object: { const: "transformation_test" },
      input: {
        type: "object",
        description:
          "The `webhook` handler received: `event_type`, `event_id` (made up for the test), `method`, `url`, `headers` (a saved endpoint's values `[redacted]`) and `payload`, the body Herald would send.",
      },
      cancelled: {
        type: "boolean",
        description: "The transformation set `cancel: true`: nothing would be sent.",
      },
      request: requestShown,
      error: {
        type: ["object", "null"],
        required: ["kind", "cause", "message", "line"],
        properties: {
          kind: { const: "transformation_error" },
          cause: {
            enum: ["syntax", "threw", "timeout", "memory", "invalid"],
            description:
              "`syntax`: it does not compile. `threw`: it threw. `timeout`, `memory`: it ran past TRANSFORMATION_TIMEOUT or TRANSFORMATION_MEMORY_MB. `invalid`: it returned something that is not a request.",
          },
          message: {
            type: "string",
            examples: ["TypeError: cannot read property 'amount' of undefined (line 3)"],
          },
          line: { type: ["integer", "null"], description: "The line of the transformation, where known." },
        },
        description:
          "Why it failed, as a delivery's attempt would fail with `transformation_error`; null otherwise.",
      },
    },
  },
};

/** The event's data as PostgreSQL stores it and the senders send it: jsonb's key order and spacing. */
async function storedText(deps: Deps, data: Record<string, unknown>): Promise<string> {
  const { text } = storedData(data);
  const { rows } = await deps.pool.query<{ data: string }>("SELECT $1::jsonb::text AS data", [text]);
  return rows[0]!.data;
}

/** The event to run on: the one given, or the example of the type named. */
async function eventOf(deps: Deps, account: Account, body: TryBody): Promise<EventInput> {
  if (body.event && body.event_type !== undefined)
    throw invalid("event", "Send either event_type or event, not both.");
  if (body.event) return body.event;
  if (body.event_type === undefined)
    throw invalid("event_type", "Send event_type (to run on its example) or event.");
  const type = await deps.prisma.eventType.findUnique({
    where: { accountId_name: { accountId: account.id, name: body.event_type } },
    select: { schema: true },
  });
  if (!type) throw invalid("event_type", `No event type named '${body.event_type}'.`);
  const example = type.schema ? exampleOrNull(type.schema) : null;
  const data = typeof example === "object" && example !== null && !Array.isArray(example) ? example : {};
  return { type: body.event_type, data: data as Record<string, unknown> };
}

/**
 * Runs `source` on `event` as the sender would for an endpoint at `url` with `headers`. Each
 * run is one of the account's try-its (takeTransformationTurn); workers too busy to take it
 * within TRANSFORMATION_WAIT_MS, or before `req`'s client leaves, are a 429, not the code's
 * failure.
 */
async function tryIt(
  deps: Deps,
  account: Account,
  req: Answerable,
  source: string,
  target: { url: string; headers: Record<string, string>; oauth2: boolean },
  event: EventInput,
) {
  takeTransformationTurn(deps, account);
  const at = new Date();
  const payload = webhookPayload(event.type, at, await storedText(deps, event.data));
  const { url, headers, oauth2 } = target;
  const attempt = { event_id: newId("event"), url, headers, payload };
  // What the run is given, as shown: the worker builds the same from `attempt`.
  const input: WebhookInput = webhookInput(attempt);
  const hidden = Object.keys(input.headers);
  const shown = { ...input, headers: redactHeaders(input.headers, hidden) };
  const answer = { object: "transformation_test" as const, input: shown, cancelled: false };
  const wait = requestDeadline(req, TRANSFORMATION_WAIT_MS);
  try {
    const party = transformParty(account);
    const result = await deps.transforms.run(party, source, attempt, at.getTime(), wait.signal);
    if (result.cancel) return { ...answer, cancelled: true, request: null, error: null };
    // What the sender would refuse of it, said as the sender says it.
    const refused = refusal(input.url, oauth2, result);
    if (refused) throw new TransformationError("invalid", refused);
    const request = { method: result.method, url: result.url, body: result.body };
    return {
      ...answer,
      request: { ...request, headers: redactHeaders(result.headers, hidden) },
      error: null,
    };
  } catch (err) {
    const busy = transformationsBusy(err);
    if (busy) throw busy;
    if (!(err instanceof TransformationError)) throw err;
    const { cause, message, line } = err;
    return { ...answer, request: null, error: { kind: "transformation_error", cause, message, line } };
  } finally {
    wait.clear();
  }
}

const answered = { status: 200, schema: ref("TransformationTest"), description: "What the run gave." };

export const transformationTestRoutes: RouteSpec[] = [
  {
    method: "post",
    path: "/v3/endpoints/transformation/test",
    auth: "account",
    scope: "endpoints:write",
    audit: false,
    portal: "write",
    tag: "Endpoints",
    summary: "Test an unsaved transformation",
    description:
      "Runs `transformation` for an endpoint not saved yet (the create form's preview): at `url` with `headers`, on `event_type`'s example or on `event`. Answers `200` with the request that would be sent, `cancelled`, or the `error` with its line (a syntax error too); nothing is stored or sent. A `400` is a request this cannot run: no such event type, a bad URL, or a source over 65,536 bytes. A `429` at `transformation`, with `Retry-After`: over the rate of try-its and saves with a transformation (`rate_limited`), or the workers too busy for now (`transformation_busy`).",
    formJson: ["event"],
    body: {
      type: "object",
      additionalProperties: false,
      required: ["app", "transformation", "url"],
      properties: {
        app: appRef,
        transformation: { ...sourceField, description: "The source to try, as `transformation` on create." },
        url: { ...endpointFields.url, description: "The endpoint's URL, as on create." },
        headers: {
          ...endpointFields.headers,
          description:
            "The endpoint's custom headers, as on create: the run sees them, the answer shows them `[redacted]`.",
        },
        ...tryFields,
      },
    },
    response: answered,
    async handler({ account, body, deps, req }: Ctx<object, object, UnsavedBody>) {
      const app = await resolveApp(deps.prisma, account.id, body.app, "app", { operational: "allow" });
      checkAppReach(account, app.id, "app", body.app, "app");
      checkSize(body.transformation);
      const url = checkEndpointUrl(body.url, deps.config.destinationTypes).url;
      const headers = checkHeaders(body.headers ?? {});
      const event = await eventOf(deps, account, body);
      const target = { url, headers, oauth2: false };
      return { body: await tryIt(deps, account, req, body.transformation, target, event) };
    },
  },
  {
    method: "post",
    path: "/v3/endpoints/{id}/transformation/test",
    auth: "account",
    scope: "endpoints:write",
    audit: false,
    portal: "write",
    tag: "Endpoints",
    summary: "Test an endpoint's transformation",
    description:
      "Runs the endpoint's transformation, or `transformation` in its place (an edit not saved yet), on `event_type`'s example or on `event`, as a delivery to this endpoint would run it. Its custom header values are write-only: the run sees each as `[redacted]` (deliveries see the real ones). Answers `200` with the request that would be sent, `cancelled`, or the `error` with its line; nothing is stored or sent. A `429` at `transformation`, with `Retry-After`: over the rate of try-its and saves with a transformation (`rate_limited`), or the workers too busy for now (`transformation_busy`).",
    params: { id: "The endpoint's id." },
    formJson: ["event"],
    body: {
      type: "object",
      additionalProperties: false,
      properties: {
        transformation: { ...sourceField, description: "Try this instead of the saved one." },
        ...tryFields,
      },
    },
    response: answered,
    async handler({ account, params, body, deps, req }: Ctx<{ id: string }, object, TryBody>) {
      const endpoint = await findEndpoint(deps.prisma, account, params.id);
      const source = body.transformation ?? endpoint.transformation;
      if (source === null)
        throw invalid("transformation", "This endpoint has no transformation: send one to try.");
      checkSize(source);
      const names = Object.keys((endpoint.headers ?? {}) as object);
      const headers = Object.fromEntries(names.map((name) => [name, REDACTED]));
      const event = await eventOf(deps, account, body);
      const target = { url: endpoint.url, headers, oauth2: shownAuth(endpoint.auth).oauth2 !== null };
      return { body: await tryIt(deps, account, req, source, target, event) };
    },
  },
];
