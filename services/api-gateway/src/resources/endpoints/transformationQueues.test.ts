import { TransformPool } from "@herald/transform";
import { describe, expect, it } from "vitest";
import type { Account } from "../../context.ts";
import { ApiError } from "../../http/errors.ts";
import { RateLimiter } from "../../http/rateLimit.ts";
import { checkTransformation, TRANSFORMATION_QUEUES } from "./transformation.ts";

/**
 * The gateway's bounds on saves and try-its waiting for a worker (TRANSFORMATION_QUEUES), on a
 * pool of its own: a portal session's, its account's (all its sessions together), and the
 * gateway's. Each save is asked of the pool at once, before its worker has loaded, so every one
 * waits, and the bounds alone decide which are refused (429 transformation_busy), at once.
 */
const SOURCE = "function handler(webhook) { return webhook; }";
const api = (id: string): Account => ({ id, keyId: `key_${id}`, via: "key" });
const portal = (id: string, session: string): Account => ({
  id,
  keyId: `key_${id}`,
  via: "portal",
  appId: "app_1",
  session: { id: session, expiresAt: new Date(Date.now() + 3_600_000), keyId: `key_${id}` },
});

/** Asks a save of each of `who` in turn, and answers which were refused as busy. */
async function save(who: Account[]): Promise<boolean[]> {
  const pool = new TransformPool({
    workers: 1,
    cached: 4,
    memoryBytes: 16 << 20,
    timeoutMs: 50,
    ...TRANSFORMATION_QUEUES,
  });
  const deps = { transforms: pool, transformLimiter: new RateLimiter(0) };
  const refused = who.map(() => false);
  const saves = who.map((account, i) =>
    checkTransformation(deps, account, {}, SOURCE).catch((err: unknown) => {
      refused[i] = err instanceof ApiError && err.toBody().error.code === "transformation_busy";
    }),
  );
  // Those waiting are failed by the pool's closing ("shutting down"), not as busy.
  await pool.close();
  await Promise.all(saves);
  return refused;
}

const times = (n: number, account: Account) => Array.from({ length: n }, () => account);

describe("the saves and try-its that may wait for a worker", () => {
  it("are 4 a portal session, the fifth refused at once", async () => {
    expect(await save(times(5, portal("acct_1", "ps_1")))).toEqual([false, false, false, false, true]);
  });

  it("are 8 an account, its portal sessions and its API together: a new session brings no more", async () => {
    const refused = await save([
      ...times(4, portal("acct_1", "ps_1")),
      ...times(4, portal("acct_1", "ps_2")),
      portal("acct_1", "ps_3"),
      api("acct_1"),
      api("acct_2"),
    ]);
    expect(refused).toEqual([...Array(8).fill(false), true, true, false]);
  });

  it("are 32 on the gateway, whatever their accounts", async () => {
    const accounts = ["a", "b", "c", "d"].flatMap((id) => [
      ...times(4, portal(`acct_${id}`, "ps_1")),
      ...times(4, portal(`acct_${id}`, "ps_2")),
    ]);
    const refused = await save([...accounts, api("acct_e")]);
    expect(refused.filter(Boolean)).toHaveLength(1);
    expect(refused.at(-1)).toBe(true);
  });
});
