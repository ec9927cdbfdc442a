import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";
import type { Pool, PoolClient } from "./pool.ts";

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
    adapter: new PrismaPg(releasingLostConnections(pool)),
    transactionOptions: { maxWait: 10_000, timeout: 30_000 },
  });
}

/**
 * The pool as Prisma's transactions see it: a connection that is lost while a transaction holds
 * it goes back to the pool (which drops it) at once. Prisma ends a failed transaction with a
 * ROLLBACK and gives the connection back only if that succeeds; on a lost connection it cannot,
 * and each database outage that caught a transaction kept one of the pool's connections for
 * good. Prisma's own release, should it come later, then does nothing.
 */
function releasingLostConnections(pool: Pool): Pool {
  return new Proxy(pool, {
    get(target, key) {
      // The pool's own methods run on the pool itself: its `query` calls `this.connect(callback)`.
      const value = Reflect.get(target, key, target);
      if (key !== "connect") return typeof value === "function" ? value.bind(target) : value;
      return async () => {
        const client = await target.connect();
        const release = client.release.bind(client);
        let released = false;
        const lost = () => client.release(new Error("connection lost during a transaction"));
        client.release = ((err?: Error | boolean) => {
          if (released) return;
          released = true;
          client.removeListener("end", lost);
          release(err);
        }) as PoolClient["release"];
        client.once("end", lost);
        return client;
      };
    },
  });
}
