import type { Queryable } from "../pool.ts";

/** An outbox row as the gateway stages, publishes and relays it. */
export type OutboxRow = { id: bigint; name: string; messageId: string; payload: unknown; headers: unknown };

/**
 * An outbox row a lifecycle transaction wrote with an operational notice (the lifecycle's
 * operational.ts): publish it after the commit, then delete it. Its id as pg gives a bigint: text.
 */
export type StagedMessage = {
  id: string;
  name: "event.created.v1";
  messageId: string;
  payload: { event_id: string; account_id: string; app_id: string; type: string; created_at: string };
};

/** Where a statement runs: a pg client, or an adapter of a Prisma transaction (`$queryRawUnsafe`). */
export type Statements = { query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> };

/**
 * The one statement that writes outbox rows, so the table has one writer: the rows of `from`,
 * a FROM item with the columns name, message_id, payload and headers (JSON: text or jsonb) and
 * created_at, returning each row's id and message_id. The gateway's event writer runs it inside
 * its group commit and `stageMessage` inside the caller's transaction; the lifecycle's
 * operational notices and the dispatcher's ended listen endpoints inside their own statements.
 */
export function insertOutboxRows(from: string): string {
  return `INSERT INTO outbox (name, message_id, payload, headers, created_at)
    SELECT name, message_id, payload::jsonb, headers::jsonb, created_at FROM ${from}
    RETURNING id, message_id`;
}

/** Writes one message inside the caller's transaction; returns its row. */
export async function stageMessage(
  tx: Queryable | Statements,
  message: Omit<OutboxRow, "id">,
): Promise<OutboxRow> {
  const { rows } = await (tx as Statements).query(
    insertOutboxRows(
      "unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) AS m(name, message_id, payload, headers, created_at)",
    ),
    [
      [message.name],
      [message.messageId],
      [JSON.stringify(message.payload)],
      [JSON.stringify(message.headers)],
      [new Date()],
    ],
  );
  const [row] = rows as { id: bigint | string }[];
  return { id: BigInt(row!.id), ...message };
}
