import { createHash } from "node:crypto";
import type { PrismaClient, SecretBox } from "@herald/db";
import type { Reply } from "../context.ts";
import { ApiError, conflict, invalid } from "./errors.ts";

/**
 * `Idempotency-Key` on a POST: the same key with the same request within 24 hours returns the
 * first response again and does nothing twice; the same key with another request is a 409.
 * A placeholder row is written before the work, so a concurrent retry gets a 409 instead of
 * doing the work a second time. Server errors are not remembered: the retry runs again.
 * Remembered bodies are sealed with the secret box: some carry secrets shown once (a new API
 * key, a rotated signing secret) that must not sit in the database in the clear.
 */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

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
  prisma: Pick<PrismaClient, "idempotencyRecord">,
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
  await prisma.idempotencyRecord.deleteMany({
    where: { accountId, key, createdAt: { lt: new Date(Date.now() - IDEMPOTENCY_TTL_MS) } },
  });
  try {
    await prisma.idempotencyRecord.create({
      data: { accountId, key, requestHash: hash, responseStatus: 0, responseBody: {} },
    });
  } catch (err) {
    if ((err as { code?: string }).code !== "P2002") throw err;
    const found = await prisma.idempotencyRecord.findUnique({ where: id });
    if (!found)
      throw conflict(
        "idempotency_in_progress",
        "A request with this Idempotency-Key just finished; retry it.",
      );
    if (found.requestHash !== hash) {
      throw conflict(
        "idempotency_conflict",
        "This Idempotency-Key was used with a different request.",
        "Idempotency-Key",
      );
    }
    if (found.responseStatus === 0) {
      throw conflict(
        "idempotency_in_progress",
        "A request with this Idempotency-Key is still in progress.",
        "Idempotency-Key",
      );
    }
    const sealed = (found.responseBody as { sealed: string }).sealed;
    return { status: found.responseStatus, body: JSON.parse(secrets.open(sealed, context)), replayed: true };
  }
  try {
    const reply = await run();
    await prisma.idempotencyRecord.update({
      where: id,
      data: {
        responseStatus: reply.status ?? 200,
        responseBody: { sealed: secrets.seal(JSON.stringify(reply.body), context) },
      },
    });
    return reply;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500 && err.status !== 429) {
      await prisma.idempotencyRecord.update({
        where: id,
        data: {
          responseStatus: err.status,
          responseBody: { sealed: secrets.seal(JSON.stringify(err.toBody()), context) },
        },
      });
    } else {
      await prisma.idempotencyRecord.delete({ where: id }).catch(() => {});
    }
    throw err;
  }
}
