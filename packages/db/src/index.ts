/**
 * Everything the api-gateway uses, the Prisma client included. A service without Prisma takes
 * the subpaths instead (`@herald/db/pool`, `/lifecycle`, `/secrets`, …), so its bundle holds
 * only what they import: the sender's none of Prisma or pg.
 */
export { createPrisma, Prisma, PrismaClient } from "./client.ts";
export { isTransientDbError } from "./errors.ts";
export { type IdKind, idFloor, idPrefixes, isId, newId, ulid } from "./ids.ts";
export { ensureDatabase, migrate, migrationsDir, readMigrations } from "./migrate.ts";
export { createPool, inTransaction, type Pool, type PoolClient, type Queryable } from "./pool.ts";
export { createSecretBox, type SecretBox } from "./secrets.ts";
export * from "./statuses.ts";
export { storable, storableText, unstorableAt } from "./text.ts";
