import { logBytes } from "@herald/db/lifecycle";
import pg from "pg";

/**
 * What delivery leaves on disk: the bytes of the delivery log's tables (events, deliveries,
 * attempts) with their indexes and TOAST, over every partition (`logBytes`). Read before and
 * after an end-to-end scenario, the growth divided by what the scenario accepted is a figure to
 * size a disk with.
 */
export type DiskUse = {
  /** Growth of the three tables during the scenario. */
  bytes: number;
  events: number;
  bytesPerEvent: number;
  bytesPerDelivery: number;
};

export async function logBytesAt(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await logBytes(client);
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
