import { type Pool, prepared } from "@herald/db";
import { insertOutboxRows } from "@herald/db/outbox";

/**
 * Group commit for accepted events. Every request that arrives in the same turn of the event
 * loop joins one statement that inserts all their events and outbox messages (atomic, one
 * round trip, one WAL flush) instead of one each. An event whose app is deleted (another
 * gateway's cache may still hold it for a few seconds) is left out, and its request gets
 * `AppDeletedError`. When a batch fails, its rows are retried one by one, so a single bad row
 * fails only its own request.
 */
export type EventRecord = {
  id: string;
  accountId: string;
  appId: string;
  type: string;
  data: string;
  /** The data's size as PostgreSQL writes it back (`storedJsonBytes`), spaces aside. */
  dataBytes: number;
  traceContext: string | null;
  createdAt: Date;
  message: { name: string; messageId: string; payload: string; headers: string };
};

type Pending = { record: EventRecord; resolve: (outboxId: bigint) => void; reject: (err: unknown) => void };

const INSERT = prepared(
  "accept-events",
  `
  WITH x AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
                         $8::text[], $9::text[], $10::text[], $11::text[], $12::int[])
      AS x(id, account_id, app_id, type, data, trace_context, created_at, name, message_id, payload, headers, data_bytes)),
  e AS (
    INSERT INTO events (id, account_id, app_id, type, data, data_bytes, trace_context, created_at)
    SELECT id, account_id, app_id, type, data::jsonb, data_bytes, trace_context, created_at FROM x
    WHERE EXISTS (SELECT 1 FROM apps WHERE apps.id = x.app_id AND apps.deleted_at IS NULL)
    RETURNING id)
  ${insertOutboxRows("x JOIN e ON e.id = x.id")}`,
);

/** The event's app was deleted: nothing was stored. */
export class AppDeletedError extends Error {}

export class EventWriter {
  private queue: Pending[] = [];
  private scheduled = false;

  constructor(
    private readonly pool: Pool,
    private readonly maxBatch = 200,
  ) {}

  /** Resolves with the outbox row's id once the event is committed. */
  write(record: EventRecord): Promise<bigint> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      if (this.queue.length >= this.maxBatch) void this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (!batch.length) return;
    const settle = (p: Pending, ids: Map<string, bigint>) => {
      const id = ids.get(p.record.message.messageId);
      if (id === undefined) p.reject(new AppDeletedError(`app ${p.record.appId} is deleted`));
      else p.resolve(id);
    };
    try {
      const ids = await this.insert(batch.map((p) => p.record));
      for (const p of batch) settle(p, ids);
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      for (const p of batch) {
        await this.insert([p.record]).then(
          (ids) => settle(p, ids),
          (e) => p.reject(e),
        );
      }
    }
  }

  private async insert(records: EventRecord[]): Promise<Map<string, bigint>> {
    const column = <T>(pick: (r: EventRecord) => T) => records.map(pick);
    const { rows } = await this.pool.query<{ id: string; message_id: string }>(
      INSERT([
        column((r) => r.id),
        column((r) => r.accountId),
        column((r) => r.appId),
        column((r) => r.type),
        column((r) => r.data),
        column((r) => r.traceContext),
        column((r) => r.createdAt),
        column((r) => r.message.name),
        column((r) => r.message.messageId),
        column((r) => r.message.payload),
        column((r) => r.message.headers),
        column((r) => r.dataBytes),
      ]),
    );
    return new Map(rows.map((r) => [r.message_id, BigInt(r.id)]));
  }
}
