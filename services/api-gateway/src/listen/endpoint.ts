import { LISTEN_SCHEME } from "@herald/contracts/destinations";
import { endpointSecretContext, newId } from "@herald/db";
import { type AuditSource, actorOf, recordAudit } from "../audit/record.ts";
import type { Account, Deps } from "../context.ts";
import { invalid, missing } from "../http/errors.ts";
import { checkAppReach, resolveApp, withLiveApp } from "../resources/common.ts";
import { deleteEndpoint } from "../resources/endpoints/crud.ts";
import {
  checkEndpointRoom,
  checkEventTypes,
  checkSecret,
  generateSecret,
} from "../resources/endpoints/input.ts";
import { serializeEndpoint } from "../resources/endpoints/object.ts";

/** How long a listen endpoint outlives its last renewal (its socket's gateway renews it every 20 s). */
export const LEASE_MS = 60_000;

/**
 * A signing secret the client chose, so that the secret its local server checks stays the same
 * from one socket to the next (the CLI keeps one in its profile); none: a new one each time.
 */
export const LISTEN_SECRET_HEADER = "herald-listen-secret";

/** The URL of a listen endpoint: only made here, never accepted from a request (checkUrl takes http and https only). */
export const listenUrl = (endpointId: string) => `${LISTEN_SCHEME}//${endpointId}`;

/**
 * The temporary endpoint of a `herald listen` socket, from its query: `app` (id or uid) and
 * optional `event_types` (comma-separated names; none: all), within the account's
 * LISTEN_MAX_PER_ACCOUNT and the app's ENDPOINTS_PER_APP_MAX. Signed with the secret in the
 * Herald-Listen-Secret header, else a new one, returned in the socket's `ready` frame.
 */
export async function createListenEndpoint(
  deps: Deps,
  account: Account,
  query: URLSearchParams,
  chosenSecret: string | undefined,
  source: AuditSource,
) {
  const ref = query.get("app");
  if (!ref) throw missing("app");
  const app = await resolveApp(deps.prisma, account.id, ref, "app");
  checkAppReach(account, app.id, "app", ref, "app");
  const types = (query.get("event_types") ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const eventTypes = await checkEventTypes(deps.prisma, account.id, types);
  const secret =
    chosenSecret !== undefined ? checkSecret(chosenSecret, "Herald-Listen-Secret") : generateSecret();
  const id = newId("endpoint");
  const row = await withLiveApp(deps.prisma, { id: app.id, ref, param: "app" }, async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`listen:${account.id}`}))`;
    // Sockets, not endpoints: one whose endpoint was deleted counts until it is closed
    // (endListenEndpoint), on whichever gateway; one whose gateway died, until its lease ends.
    const listening = await tx.endpoint.count({
      where: { accountId: account.id, listenUntil: { gt: new Date() } },
    });
    if (listening >= deps.config.listenMaxPerAccount)
      throw invalid(
        undefined,
        `This account has ${listening} \`herald listen\` sockets open, the most it may (LISTEN_MAX_PER_ACCOUNT); close one first.`,
        "listen_limit_reached",
      );
    await checkEndpointRoom(tx, app.id, ref, deps.config.endpointsPerAppMax);
    // It receives the app's deliveries: as much a change as an endpoint made through the API.
    await recordAudit(tx, {
      accountId: account.id,
      actor: actorOf(account),
      action: "endpoint.created",
      target: { type: "endpoint", id },
      fields: ["listen"],
      source,
    });
    return tx.endpoint.create({
      data: {
        id,
        accountId: account.id,
        appId: app.id,
        url: listenUrl(id),
        description: "herald listen: deleted when the CLI exits",
        eventTypes,
        secret: deps.secrets.seal(secret, endpointSecretContext(id)),
        listenUntil: new Date(Date.now() + LEASE_MS),
        flow: { create: {} },
      },
      include: { flow: true },
    });
  });
  return { endpoint: row, accountId: account.id, serialized: serializeEndpoint(row), secret };
}

/**
 * Keeps the endpoint's lease; false once it was deleted (through the API, or its lease ran out)
 * or the API key that opened the socket was revoked or expired.
 */
export async function renewLease(deps: Deps, endpointId: string, keyId: string): Promise<boolean> {
  const key = await deps.prisma.apiKey.findUnique({
    where: { id: keyId },
    select: { revokedAt: true, expiresAt: true },
  });
  if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= new Date())) return false;
  const { count } = await deps.prisma.endpoint.updateMany({
    where: { id: endpointId, deletedAt: null },
    data: { listenUntil: new Date(Date.now() + LEASE_MS) },
  });
  return count > 0;
}

/**
 * Its socket closed (or never opened): the endpoint's lease ends, so it stops counting against
 * LISTEN_MAX_PER_ACCOUNT at once, then it is deleted. Should deleting fail, the dispatcher does
 * it, the lease being over; should both fail, the lease runs out within a minute.
 */
export async function endListenEndpoint(
  deps: Deps,
  account: Account,
  endpointId: string,
  source: AuditSource,
): Promise<void> {
  try {
    await deps.prisma.endpoint.updateMany({
      where: { id: endpointId, listenUntil: { gt: new Date() } },
      data: { listenUntil: new Date() },
    });
    await deleteEndpoint(deps, account.id, endpointId, (tx, target) =>
      recordAudit(tx, {
        accountId: account.id,
        actor: actorOf(account),
        action: "endpoint.deleted",
        target,
        fields: ["listen"],
        source,
      }),
    );
  } catch (err) {
    deps.logger.warn({ err, endpoint: endpointId }, "listen endpoint not deleted now; its lease ends it");
  }
}
