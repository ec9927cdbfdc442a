/**
 * What the api-gateway (and the tooling) use, the Prisma client included. A service without
 * Prisma takes the subpaths instead (`@herald/db/pool`, `/lifecycle`, `/secrets`, …), so its
 * bundle holds only what they import: the sender's none of Prisma or pg.
 */
export { createPrisma, Prisma, PrismaClient } from "./client.ts";
export { idFloor, isId, newId } from "./ids.ts";
export { ensureDatabase, migrate } from "./migrate.ts";
export { ASYNC_COMMIT, createPool, type Pool, prepared } from "./pool.ts";
export {
  createSecretBox,
  endpointAuthContext,
  endpointHeadersContext,
  endpointSecretContext,
  type SecretBox,
} from "./secrets.ts";
