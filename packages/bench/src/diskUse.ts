import pg from "pg";

/**
 * What delivery leaves on disk: the bytes of the delivery log's tables (events, deliveries,
 * attempts) with their indexes and TOAST, from PostgreSQL's own size functions, summed over a
 * partitioned table's partitions. Read before and after an end-to-end scenario, the growth
 * divided by what the scenario accepted is a figure to size a disk with.
 */
export const LOG_TABLES = ["events", "deliveries", "attempts"] as const;

export type DiskUse = {
  /** Growth of the three tables during the scenario. */
  bytes: number;
  events: number;
  bytesPerEvent: number;
  bytesPerDelivery: number;
};

export async function logBytes(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>(
      `SELECT COALESCE(sum(CASE WHEN c.relkind = 'p'
                 THEN (SELECT COALESCE(sum(pg_total_relation_size(t.relid)), 0) FROM pg_partition_tree(c.oid) t WHERE t.isleaf)
                 ELSE pg_total_relation_size(c.oid) END), 0) AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relname = ANY($1)`,
      [[...LOG_TABLES]],
    );
    return Number(rows[0]!.bytes);
  } finally {
    await client.end();
  }
}

export function diskUse(before: number, after: number, events: number, endpoints: number): DiskUse {
  const bytes = Math.max(0, after - before);
  return {
    bytes,
    events,
    bytesPerEvent: events ? Math.round(bytes / events) : 0,
    bytesPerDelivery: events ? Math.round(bytes / (events * endpoints)) : 0,
  };
}
