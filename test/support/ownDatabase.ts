import { createPool, type Pool } from "@herald/db/pool";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase } from "./isolation.ts";

/**
 * A migrated database of the test file's own, and a pool of `size` on it: made before the
 * file's tests, ended and dropped after. The pool returned stands for the one made then.
 */
export function poolOnOwnDatabase(size: number): Pool {
  let pool: Pool | null = null;
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const db = await createTestDatabase();
    drop = db.drop;
    pool = createPool(db.url, size);
  });
  afterAll(async () => {
    await pool?.end();
    await drop();
  });
  return new Proxy({} as Pool, {
    get(_, key) {
      if (!pool)
        throw new Error("the test database is made in beforeAll: use the pool inside a hook or a test");
      const value = Reflect.get(pool, key, pool);
      return typeof value === "function" ? value.bind(pool) : value;
    },
  });
}
