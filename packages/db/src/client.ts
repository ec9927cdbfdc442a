import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";
import type { Pool } from "./pool.ts";

export { Prisma } from "./generated/client.ts";
export { PrismaClient };

/**
 * A Prisma client on the process's one pool, through the pg driver adapter (engine-free: no
 * binary to download). `$disconnect` leaves the pool open: its owner ends it.
 */
export function createPrisma(pool: Pool): PrismaClient {
  // Under load every pooled connection can be busy for a moment: waiting up to 10 s for one
  // beats failing the request (Prisma's default gives up after 2 s).
  return new PrismaClient({
    adapter: new PrismaPg(pool),
    transactionOptions: { maxWait: 10_000, timeout: 30_000 },
  });
}
