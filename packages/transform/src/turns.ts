/**
 * Whose run goes next when a worker is free: accounts take turns by the worker time they have
 * used, and within an account its endpoints (or try-it sessions) do the same. Time, not runs:
 * code that takes its whole budget each run, or overruns it in a native call QuickJS cannot
 * interrupt, waits longer for its next turn, so it delays its own account's runs, not others'.
 * Accounts, not endpoints first: an account with a hundred endpoints gets one account's share.
 *
 * Each account and owner keeps `used`, the milliseconds its runs took. One that starts waiting
 * after being idle starts at the least `used` of those already waiting (a virtual clock): time
 * it did not ask for is not saved up, and a newcomer does not jump ahead of everyone for long.
 * A run is charged an estimate when it starts (its owner's last run time) and the difference
 * when it ends, so an owner with several runs out at once is not served as if they were free.
 * An account with nothing waiting or running is forgotten, but for its owners' last run times.
 *
 * One worker is kept for other accounts: an account already on all the others gets it only while
 * no other account waits, and only for an owner whose last run was quick (`quickMs`). Code that
 * takes its whole budget, or has not run yet, never holds every worker, so another account's run
 * waits at most for a quick one to end; work that is quick uses every worker.
 */

export type Party = { account: string; owner: string };

/** `lastMs`: its last run's time; null until one ran. */
type Owner = { used: number; running: number; waiting: unknown[]; lastMs: number | null };
type Account = { used: number; running: number; owners: Map<string, Owner>; clock: number };

/** A run handed out by `next`, to give back to `done` with the time it took. */
export type Turn<J> = { job: J; party: Party; charged: number };

/** What a run is first charged when its owner has none measured yet: a small run's cost. */
const FIRST_ESTIMATE_MS = 1;
/** Owners whose last run time is kept once they are idle, the least recently run forgotten first. */
const REMEMBERED = 10_000;

export class Turns<J> {
  private readonly accounts = new Map<string, Account>();
  /** Each owner's last run time (ms), by `account/owner`, kept across idle spells. */
  private readonly lastRun = new Map<string, number>();

  /** `quickMs`: a run at most this long lets its owner have the worker kept for other accounts. */
  constructor(private readonly quickMs: number) {}
  /** The least `used` of the accounts served: where an account that starts waiting starts. */
  private clock = 0;

  /** Runs waiting for `party`'s owner. */
  waiting(party: Party): number {
    return this.accounts.get(party.account)?.owners.get(party.owner)?.waiting.length ?? 0;
  }

  add(party: Party, job: J, first = false): void {
    let account = this.accounts.get(party.account);
    if (!account) {
      account = { used: this.clock, running: 0, owners: new Map(), clock: 0 };
      this.accounts.set(party.account, account);
    }
    let owner = account.owners.get(party.owner);
    if (!owner) {
      const lastMs = this.lastRun.get(runKey(party)) ?? null;
      owner = { used: account.clock, running: 0, waiting: [], lastMs };
      account.owners.set(party.owner, owner);
    }
    if (first) owner.waiting.unshift(job);
    else owner.waiting.push(job);
  }

  /** Takes `job` back out of the waiting (its caller gave up); false when it was not waiting. */
  remove(party: Party, job: J): boolean {
    const account = this.accounts.get(party.account);
    const owner = account?.owners.get(party.owner);
    const at = owner?.waiting.indexOf(job) ?? -1;
    if (!account || !owner || at < 0) return false;
    owner.waiting.splice(at, 1);
    this.forget(party.account, account, party.owner, owner);
    return true;
  }

  /**
   * The next run, for a free worker: the account that has used least of those waiting, among
   * those running on fewer than `share` workers (all of them but one: one is kept for another
   * account while one waits), else of all that wait (no worker idles while work waits); then
   * its owner that has used least.
   */
  next(share: number): Turn<J> | undefined {
    let chosen: [string, Account] | undefined;
    let over: [string, Account] | undefined;
    let waiting = 0;
    for (const entry of this.accounts) {
      const account = entry[1];
      if (!this.hasWaiting(account)) continue;
      waiting++;
      if (account.running >= share) {
        if (!over || account.used < over[1].used) over = entry;
      } else if (!chosen || account.used < chosen[1].used) chosen = entry;
    }
    // Only one account waits, already on all workers but this one: for a quick owner only. (With
    // several waiting, all on their share, none is kept from the others: no worker idles.)
    const quickOnly = !chosen && waiting === 1;
    chosen ??= over;
    if (!chosen) return undefined;
    const [name, account] = chosen;
    let pick: [string, Owner] | undefined;
    for (const entry of account.owners) {
      const o = entry[1];
      if (!o.waiting.length || (quickOnly && !(o.lastMs !== null && o.lastMs <= this.quickMs))) continue;
      if (!pick || o.used < pick[1].used) pick = entry;
    }
    if (!pick) return undefined;
    const [ownerName, owner] = pick;
    this.clock = Math.max(this.clock, account.used);
    account.clock = Math.max(account.clock, owner.used);
    const charged = owner.lastMs ?? FIRST_ESTIMATE_MS;
    account.used += charged;
    owner.used += charged;
    account.running++;
    owner.running++;
    return { job: owner.waiting.shift() as J, party: { account: name, owner: ownerName }, charged };
  }

  /** `turn`'s run ended after `ms` of its worker's time. */
  done(turn: Turn<J>, ms: number): void {
    const account = this.accounts.get(turn.party.account);
    const owner = account?.owners.get(turn.party.owner);
    if (!account || !owner) return;
    account.used += ms - turn.charged;
    owner.used += ms - turn.charged;
    owner.lastMs = ms;
    const key = runKey(turn.party);
    this.lastRun.delete(key);
    this.lastRun.set(key, ms);
    if (this.lastRun.size > REMEMBERED) this.lastRun.delete(this.lastRun.keys().next().value as string);
    account.running--;
    owner.running--;
    this.forget(turn.party.account, account, turn.party.owner, owner);
  }

  /** Every run waiting, taken out (the pool is closing). */
  drain(): J[] {
    const all = [...this.accounts.values()].flatMap((a) =>
      [...a.owners.values()].flatMap((o) => o.waiting.splice(0) as J[]),
    );
    for (const [name, account] of this.accounts)
      for (const [ownerName, owner] of account.owners) this.forget(name, account, ownerName, owner);
    return all;
  }

  private hasWaiting(account: Account): boolean {
    for (const owner of account.owners.values()) if (owner.waiting.length) return true;
    return false;
  }

  private forget(name: string, account: Account, ownerName: string, owner: Owner): void {
    if (owner.running || owner.waiting.length) return;
    account.owners.delete(ownerName);
    if (!account.running && !account.owners.size) this.accounts.delete(name);
  }
}

const runKey = (party: Party) => `${party.account}/${party.owner}`;
