import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";

export { Prisma } from "./generated/client.ts";
export { PrismaClient };

export type DbOptions = { databaseUrl: string; poolSize?: number };

/** A Prisma client on the pg driver adapter (engine-free: no binary to download). */
export function createPrisma({ databaseUrl, poolSize = 10 }: DbOptions): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize });
  // Under load every pooled connection can be busy for a moment: waiting up to 10 s for one
  // beats failing the request (Prisma's default gives up after 2 s).
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 30_000 } });
}
