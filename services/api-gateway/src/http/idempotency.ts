import { createHash } from "node:crypto";
import type { PrismaClient, SecretBox } from "@herald/db";
import { isDatabaseUnavailable } from "@herald/db/errors";
import type { Logger } from "@herald/runtime";
import type { Reply } from "../context.ts";
import { ApiError, conflict, invalid } from "./errors.ts";

/**
 * `Idempotency-Key` on a POST: the same key with the same request within 24 hours returns the
 * first response again and does nothing twice; the same key with another request is a 409.
 * A placeholder row is written before the work, so a concurrent retry gets a 409 instead of
 * doing the work a second time (with Retry-After: the SDK waits and asks again). Server errors
 * are not remembered: the placeholder is removed and the retry runs again. When the database
 * itself is away, that removal fails too: it is tried again each second until it succeeds
 * (`Placeholders`), so the retry a 503 asks for finds the key free once the database is back. A
 * placeholder left by a gateway that died mid-request is taken over after IN_PROGRESS_LEASE_MS.
 * Remembered bodies are sealed with the secret box: some carry secrets shown once (a new API
 * key, a rotated signing secret) that must not sit in the database in the clear.
 */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/**
 * How long a placeholder holds its key: past the longest a request can take (a Prisma
 * transaction's 30 s, a connection's wait), a placeholder that old belongs to a request that
 * will never finish (its gateway died), and a retry takes the key over.
 */
export const IN_PROGRESS_LEASE_MS = 60_000;

type Records = Pick<PrismaClient, "idempotencyRecord">;
/** Outcomes waiting for the database at most: past this many, the lease frees their keys. */
const PENDING_MAX = 10_000;
type Placeholder = { accountId: string; key: string; createdAt: Date };
/** What a finished request leaves under its key: its reply, or nothing (a server error: free it). */
type Outcome = { responseStatus: number; responseBody: { sealed: string } } | null;

/**
 * Settles one placeholder, and only it (never a reply stored since, nor a placeholder of a
 * request that took the key over): stores the reply in it, or removes it.
 */
const settle = async (prisma: Records, p: Placeholder, outcome: Outcome) => {
  const where = { accountId: p.accountId, key: p.key, responseStatus: 0, createdAt: p.createdAt };
  if (outcome) await prisma.idempotencyRecord.updateMany({ where, data: outcome });
  else await prisma.idempotencyRecord.deleteMany({ where });
};

/**
 * Placeholders to settle. One the database could not take (it was away) is tried again each
 * second until it can: the work done stays done once (its reply is stored, and a retry meanwhile
 * is told to wait), and a key whose request failed is freed for the retry.
 */
export class Placeholders {
  private readonly pending = new Map<string, { placeholder: Placeholder; outcome: Outcome }>();
  private timer: NodeJS.Timeout | null = null;
  private retrying = false;

  constructor(
    private readonly prisma: Records,
    private readonly logger: Logger,
  ) {}

  async settle(placeholder: Placeholder, outcome: Outcome): Promise<void> {
    await settle(this.prisma, placeholder, outcome).catch((err) => this.later(placeholder, outcome, err));
  }

  private later(placeholder: Placeholder, outcome: Outcome, err: unknown): void {
    // Only what the database's absence explains waits; and only so many (the lease frees the rest).
    if (!isDatabaseUnavailable(err) || this.pending.size >= PENDING_MAX) {
      this.logger.warn({ err, key: placeholder.key }, "an Idempotency-Key's outcome was not stored");
      return;
    }
    this.pending.set(`${placeholder.accountId}\n${placeholder.key}`, { placeholder, outcome });
    this.timer ??= setInterval(() => void this.retry(), 1000);
    this.timer.unref();
  }

  private async retry(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    try {
      for (const [id, { placeholder, outcome }] of this.pending) {
        try {
          await settle(this.prisma, placeholder, outcome);
        } catch (err) {
          if (isDatabaseUnavailable(err)) return; // still away: the rest wait for the next second
          this.logger.warn({ err, key: placeholder.key }, "an Idempotency-Key's outcome was not stored");
        }
        this.pending.delete(id);
      }
      if (!this.pending.size && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    } finally {
      this.retrying = false;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

const inProgress = () =>
  new ApiError(
    409,
    "invalid_request_error",
    "idempotency_in_progress",
    "A request with this Idempotency-Key is still in progress; retry after the time in Retry-After.",
    "Idempotency-Key",
    undefined,
    { "Retry-After": "1" },
  );

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${canonical(body)}`)
    .digest("hex");
}

export type Replayed = Reply & { replayed?: boolean };

export async function withIdempotency(
  prisma: Records,
  placeholders: Placeholders,
  secrets: SecretBox,
  accountId: string,
  key: string,
  hash: string,
  run: () => Promise<Reply>,
): Promise<Replayed> {
  if (key.length < 1 || key.length > 255)
    throw invalid("Idempotency-Key", "Idempotency-Key must be 1 to 255 characters.");
  const id = { accountId_key: { accountId, key } };
  // The stored reply opens only as this account's reply to this key.
  const context = `idempotency:${accountId}:${key}`;
  const now = Date.now();
  // Gone: a reply past its day, or a placeholder past its lease (its request will never finish).
  await prisma.idempotencyRecord.deleteMany({
    where: {
      accountId,
      key,
      OR: [
        { createdAt: { lt: new Date(now - IDEMPOTENCY_TTL_MS) } },
        { responseStatus: 0, createdAt: { lt: new Date(now - IN_PROGRESS_LEASE_MS) } },
      ],
    },
  });
  // Its time names this request's placeholder, known here even when the insert's answer is not.
  const placeholder: Placeholder = { accountId, key, createdAt: new Date(now) };
  try {
    await prisma.idempotencyRecord.create({
      data: { ...placeholder, requestHash: hash, responseStatus: 0, responseBody: {} },
    });
  } catch (err) {
    if ((err as { code?: string }).code !== "P2002") {
      // The database went away mid-insert: it may have committed the placeholder. Removed, if so,
      // so that the retry this request's 503 asks for finds the key free.
      await placeholders.settle(placeholder, null);
      throw err;
    }
    const found = await prisma.idempotencyRecord.findUnique({ where: id });
    // Just removed: the request before failed a moment ago.
    if (!found) throw inProgress();
    if (found.requestHash !== hash) {
      throw conflict(
        "idempotency_conflict",
        "This Idempotency-Key was used with a different request.",
        "Idempotency-Key",
      );
    }
    if (found.responseStatus === 0) throw inProgress();
    const sealed = (found.responseBody as { sealed: string }).sealed;
    return { status: found.responseStatus, body: JSON.parse(secrets.open(sealed, context)), replayed: true };
  }
  const stored = (status: number, body: unknown): Outcome => ({
    responseStatus: status,
    responseBody: { sealed: secrets.seal(JSON.stringify(body), context) },
  });
  let reply: Reply;
  try {
    reply = await run();
  } catch (err) {
    const remembered = err instanceof ApiError && err.status < 500 && err.status !== 429;
    await placeholders.settle(placeholder, remembered ? stored(err.status, err.toBody()) : null);
    throw err;
  }
  await placeholders.settle(placeholder, stored(reply.status ?? 200, reply.body));
  return reply;
}
