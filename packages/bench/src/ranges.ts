/**
 * `node --import tsx <this file> <database url> <ranges>`, run in another build's root (the
 * base of `--against`): makes that build's delivery log partitions ahead, as system.ts does for
 * this one, with that build's own code (`packages/db/src/lifecycle`). A build from before the
 * log was partitioned has none to make: it says so and exits 0.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [databaseUrl, ranges] = process.argv.slice(2);
const DAY_MS = 86_400_000;
const root = process.cwd();
const lifecyclePath = join(root, "packages", "db", "src", "lifecycle", "index.ts");
const poolPath = join(root, "packages", "db", "src", "pool.ts");

type Lifecycle = {
  createRanges?: (tx: unknown, now: number, intervalMs: number, aheadMs: number) => Promise<unknown>;
};
type Pool = {
  createPool: (url: string, max: number) => { end: () => Promise<void> };
  inTransaction: <T>(pool: unknown, fn: (tx: unknown) => Promise<T>) => Promise<T>;
};

if (!databaseUrl || !ranges) {
  console.error("usage: ranges.ts <database url> <ranges>");
  process.exit(2);
}
const lifecycle: Lifecycle = existsSync(lifecyclePath) ? await import(pathToFileURL(lifecyclePath).href) : {};
if (typeof lifecycle.createRanges !== "function") {
  console.log("this build's delivery log has no partitions to make");
} else {
  const { createPool, inTransaction } = (await import(pathToFileURL(poolPath).href)) as Pool;
  const create = lifecycle.createRanges;
  const pool = createPool(databaseUrl, 1);
  try {
    await inTransaction(pool, (tx) => create(tx, Date.now(), DAY_MS, Number(ranges) * DAY_MS));
    console.log(`made ${ranges} daily ranges`);
  } finally {
    await pool.end();
  }
}
