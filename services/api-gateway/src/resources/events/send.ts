import { REQUEST_BODY_MAX_BYTES } from "@herald/contracts";
import { newId } from "@herald/db";
import { storedJsonBytes } from "@herald/db/text";
import { annotate, traceHeaders } from "@herald/runtime";
import type { Account, Ctx, Deps, Reply } from "../../context.ts";
import { AppDeletedError } from "../../eventWriter.ts";
import { invalid, notFound } from "../../http/errors.ts";
import type { Schema } from "../../http/route.ts";
import { appRef, checkAppReach, resolveAppCached } from "../common.ts";
import { assertMatches, schemaRequester } from "../eventTypes/schemaCheck.ts";

export type SendBody = { app: string; type: string; data: Record<string, unknown> };

/** What `POST /v3/events` takes, and its dry run too. */
export const sendBodySchema: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["app", "type", "data"],
  properties: {
    app: appRef,
    type: { type: "string", minLength: 1, maxLength: 64, description: "An event type name." },
    data: { type: "object", description: "The payload: any JSON object. In a form body, a JSON string." },
  },
};

/**
 * POST /v3/events, the path every event takes, so it is kept short: the key, the app and the
 * event type come from short-lived caches, and the event and its outbox message are written
 * through pg rather than Prisma, in one statement with every other event of the same moment
 * (see EventWriter).
 */
export async function sendEvent({ account, body, deps }: Ctx<object, object, SendBody>): Promise<Reply> {
  const app = await resolveAppCached(deps, account.id, body.app, "app");
  checkAppReach(account, app.id, "app", body.app, "app");
  return { status: 201, body: await acceptEvent(deps, account, app, body.type, body.data) };
}

/** The event type as the send path needs it, from the cache. */
export function eventTypeFor(deps: Deps, accountId: string, name: string) {
  return deps.caches.eventTypes.getOrLoad(`${accountId}:${name}`, () =>
    deps.prisma.eventType.findUnique({
      where: { accountId_name: { accountId, name } },
      select: { id: true, schema: true, archivedAt: true, updatedAt: true },
    }),
  );
}

/** What sending refuses: a type that does not exist or is archived, data its schema refuses (422). */
export async function checkEvent(
  deps: Deps,
  account: Account,
  typeName: string,
  data: Record<string, unknown>,
) {
  const type = await eventTypeFor(deps, account.id, typeName);
  if (!type)
    throw invalid("type", `No event type named '${typeName}'. Create it first with POST /v3/event-types.`);
  if (type.archivedAt)
    throw invalid(
      "type",
      `The event type '${typeName}' is archived and accepts no new events.`,
      "event_type_archived",
    );
  if (type.schema !== null)
    await assertMatches(deps, schemaRequester(account), { ...type, name: typeName }, data);
}

/**
 * `data` as stored, and its size as PostgreSQL writes it back (numbers with exponents in full):
 * over REQUEST_BODY_MAX_BYTES so counted, a 400 at `data`. Sending and its dry run both ask.
 */
export function storedData(data: Record<string, unknown>): { text: string; dataBytes: number } {
  const text = JSON.stringify(data);
  const dataBytes = storedJsonBytes(text);
  if (dataBytes > REQUEST_BODY_MAX_BYTES)
    throw invalid(
      "data",
      `data would be ${dataBytes} bytes as stored: numbers with large exponents are written out in full (1e308 as 309 digits); at most ${REQUEST_BODY_MAX_BYTES}.`,
    );
  return { text, dataBytes };
}

/**
 * Checks an event against its type, stores it with its outbox message, and publishes it:
 * to every subscribed endpoint of the app, or only to `onlyEndpoint` (a test event).
 */
export async function acceptEvent(
  deps: Deps,
  account: Account,
  app: { id: string },
  typeName: string,
  data: Record<string, unknown>,
  onlyEndpoint?: string,
) {
  const body = { app: app.id, type: typeName, data };
  await checkEvent(deps, account, typeName, data);
  const id = newId("event");
  annotate({ "herald.event_id": id, "herald.app_id": app.id });
  const createdAt = new Date();
  const headers = traceHeaders();
  const message = deps.outbox.message("event.created.v1", {
    event_id: id,
    account_id: account.id,
    app_id: app.id,
    type: body.type,
    created_at: createdAt.toISOString(),
    ...(onlyEndpoint ? { only_endpoint: onlyEndpoint } : {}),
  });
  const { text, dataBytes } = storedData(body.data);
  let outboxId: bigint;
  try {
    outboxId = await deps.events.write({
      id,
      accountId: account.id,
      appId: app.id,
      type: body.type,
      data: text,
      dataBytes,
      traceContext: headers.traceparent ?? null,
      createdAt,
      message: {
        name: message.name,
        messageId: message.messageId,
        payload: JSON.stringify(message.payload),
        headers: JSON.stringify(headers),
      },
    });
  } catch (err) {
    // The app was deleted after the cache saw it (on this gateway or another).
    if (err instanceof AppDeletedError || (err as { code?: string }).code === "23503") {
      deps.caches.apps.clear();
      throw notFound("app", app.id, "app");
    }
    throw err;
  }
  deps.outbox.publishAfterCommit([{ id: outboxId, ...message }]);
  return {
    id,
    object: "event",
    app: app.id,
    type: body.type,
    data: body.data,
    data_erased_at: null,
    created_at: createdAt.toISOString(),
    deliveries: [],
    deliveries_has_more: false,
  };
}
