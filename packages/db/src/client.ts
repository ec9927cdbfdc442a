import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";

export { Prisma } from "./generated/client.ts";
export { PrismaClient };

export type DbOptions = { databaseUrl: string; poolSize?: number };

/** A Prisma client on the pg driver adapter (engine-free: no binary to download). */
export function createPrisma({ databaseUrl, poolSize = 10 }: DbOptions): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize });
  return new PrismaClient({ adapter });
}
