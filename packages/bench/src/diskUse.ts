import pg from "pg";

/**
 * What delivery leaves on disk: the bytes of the delivery log's tables (events, deliveries,
 * attempts) with their indexes and TOAST, over every partition. Read before and after an
 * end-to-end scenario, the growth divided by what the scenario accepted is a figure to size a
 * disk with.
 */
export type DiskUse = {
  /** Growth of the three tables during the scenario. */
  bytes: number;
  events: number;
  bytesPerEvent: number;
  bytesPerDelivery: number;
};

const LOG_TABLES = ["events", "deliveries", "attempts"];

/**
 * The three tables' bytes: the leaves of each one's partition tree, or the table itself in a
 * build from before the log was partitioned (`--against` an older commit), whose tables have
 * no partition tree.
 */
const LOG_BYTES = `
  SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes
  FROM pg_class c
  WHERE c.relkind = 'r' AND (
    (c.relnamespace = 'public'::regnamespace AND c.relname = ANY($1))
    OR c.oid IN (SELECT t.relid FROM unnest($1::text[]) AS r(name),
                 LATERAL pg_partition_tree(to_regclass(r.name)) t WHERE t.isleaf))`;

export async function logBytesAt(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string }>(LOG_BYTES, [LOG_TABLES]);
    return Number(rows[0]?.bytes ?? 0);
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
