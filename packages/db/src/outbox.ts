/**
 * The one statement that writes outbox rows, so the table has one writer: the rows of `from`,
 * a FROM item with the columns name, message_id, payload and headers (JSON: text or jsonb) and
 * created_at, returning each row's id and message_id. The gateway's event writer runs it inside
 * its group commit and its outbox's `stage` inside the caller's transaction; the lifecycle's
 * operational notices and the dispatcher's ended listen endpoints inside their own statements.
 * A subpath of its own (`@herald/db/outbox`): it pulls in neither Prisma nor pg.
 */
export function insertOutboxRows(from: string): string {
  return `INSERT INTO outbox (name, message_id, payload, headers, created_at)
    SELECT name, message_id, payload::jsonb, headers::jsonb, created_at FROM ${from}
    RETURNING id, message_id`;
}
