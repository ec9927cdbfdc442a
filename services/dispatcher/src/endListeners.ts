import { newId } from "@herald/db/ids";
import { insertOutboxRows } from "@herald/db/outbox";
import type { DispatcherDeps } from "./deps.ts";
import { dropEndpoint } from "./dropOpen.ts";

/**
 * `herald listen` endpoints whose lease ran out (the gateway holding their socket died before it
 * could delete them): deleted, each with its `endpoint.deleted.v1` in the outbox in the same
 * statement, so it is announced even should this process die next (the gateway's outbox relay
 * publishes it: packages/db/src/outbox); their open deliveries are dropped here at once. 500 a
 * pass at most, locked in id order (the lifecycle's locking rule). Returns how many.
 */
export async function endListeners(deps: DispatcherDeps): Promise<number> {
  const { rows } = await deps.db.query<{ id: string; account_id: string; deleted_at: Date }>(
    `WITH ended AS (
       UPDATE endpoints SET deleted_at = now()
       WHERE id IN (SELECT id FROM endpoints WHERE listen_until < now() AND deleted_at IS NULL
                    ORDER BY id LIMIT 500 FOR UPDATE)
         AND deleted_at IS NULL
       RETURNING id, account_id, deleted_at),
     told AS (
       ${insertOutboxRows(`(
         SELECT 'endpoint.deleted.v1' AS name, $1 || '_' || id AS message_id,
                jsonb_build_object('endpoint_id', id, 'account_id', account_id,
                                   'deleted_at', to_char(deleted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                  AS payload,
                '{}'::jsonb AS headers, now() AS created_at
         FROM ended) AS m`)})
     SELECT * FROM ended`,
    [newId("message")],
  );
  for (const r of rows)
    await dropEndpoint(deps, {
      endpoint_id: r.id,
      account_id: r.account_id,
      deleted_at: r.deleted_at.toISOString(),
    });
  if (rows.length)
    deps.logger.info({ endpoints: rows.length }, "herald listen endpoints ended: their lease ran out");
  return rows.length;
}
