export { createPrisma, type DbOptions, Prisma, PrismaClient } from "./client.ts";
export { type IdKind, idFloor, idPrefixes, isId, newId, ulid } from "./ids.ts";
export { ensureDatabase, migrate, migrationsDir, readMigrations } from "./migrate.ts";
export { createPool, inTransaction, type Pool, type PoolClient } from "./pool.ts";
export { createSecretBox, parseEncryptionKey, type SecretBox } from "./secrets.ts";
