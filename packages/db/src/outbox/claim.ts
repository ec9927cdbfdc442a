import type { OutboxRow, Statements } from "./rows.ts";

/**
 * The relay's pass, in its transaction: the oldest rows written before `before` (that the
 * publish after their commit left behind), at most `limit`, locked so that another gateway's
 * relay skips them. The caller publishes them and deletes them (`deleteRows`) before it commits.
 */
export async function claimForRelay(tx: Statements, before: Date, limit: number): Promise<OutboxRow[]> {
  const { rows } = await tx.query(
    `SELECT id, name, message_id AS "messageId", payload, headers FROM outbox
     WHERE created_at < $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [before, limit],
  );
  return rows as OutboxRow[];
}
