/**
 * Whose run goes next when a worker is free: accounts take turns by the worker time they have
 * used, and within an account its endpoints (or try-it sessions) do the same. Time, not runs:
 * code that takes its whole budget each run, or overruns it in a native call QuickJS cannot
 * interrupt, waits longer for its next turn, so it delays its own account's runs, not others'.
 * Accounts, not endpoints first: an account with a hundred endpoints gets one account's share.
 *
 * Each account and owner keeps `used`, the milliseconds its runs took. One that starts waiting
 * after being idle starts at the least `used` of those served (a virtual clock), plus what it
 * had used past that clock when it went idle (remembered): time it did not ask for is not saved
 * up, and going idle between runs does not wipe out what it used. A run is charged an estimate
 * when it starts (its owner's last run time) and the difference when it ends, so an owner with
 * several runs out at once is not served as if they were free.
 *
 * Clean and unclean runs. A run is clean when its account has not overrun for a while (a
 * strike: any run that failed for its time or memory, or ended with its worker, as the pool
 * says; not one its worker merely measured long, which the machine's load alone can make) and its owner's last
 * run, if any, was quick (`quickMs`). At most `share` (all workers but one) unclean runs go at
 * once, whatever their accounts, and an account already on `share` workers gets another only
 * for a clean run of an owner known quick (not one not yet run): one worker is always left to
 * quick code. An account whose endpoints were primed with quick runs loses that with its first
 * overrun, for all of them, so it can hold the last worker once a strike (a minute), for at
 * most one overrun.
 */

export type Party = { account: string; owner: string };

type Owner = { used: number; running: number; waiting: unknown[]; lastMs: number | null };
type Account = { used: number; running: number; waiting: number; owners: Map<string, Owner>; clock: number };

/**
 * A run handed out by `next`, to give back to `done` with the time it took. `quick`: its owner's
 * last run was quick and its account has no strike (clean, and known quick).
 */
export type Turn<J> = { job: J; party: Party; charged: number; clean: boolean; quick: boolean };

/** What a run is first charged when its owner has none measured yet: a small run's cost. */
const FIRST_ESTIMATE_MS = 1;
/** Owners' last run times, accounts' strikes and their time owed, kept for this many each. */
const REMEMBERED = 10_000;
/** How long an overrun makes its account's runs unclean. */
const STRIKE_MS = 60_000;

export class Turns<J> {
  private readonly accounts = new Map<string, Account>();
  /** Each owner's last run time (ms), by `account/owner`, kept across idle spells. */
  private readonly lastRun = new Map<string, number>();
  /** Until when each struck account's runs are unclean. */
  private readonly strikes = new Map<string, number>();
  /** What an idle account had used past the clock when it went idle. */
  private readonly owed = new Map<string, number>();
  /** The least `used` of the accounts served: where an account that starts waiting starts. */
  private clock = 0;
  private uncleanRunning = 0;
  /** Runs waiting, all accounts. */
  waitingTotal = 0;

  /** `quickMs`: a run at most this long is quick (clean, as long as its account has no strike). */
  constructor(
    private readonly quickMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs waiting for `party`'s owner. */
  waiting(party: Party): number {
    return this.accounts.get(party.account)?.owners.get(party.owner)?.waiting.length ?? 0;
  }

  /** Runs waiting for all of `account`'s owners. */
  waitingOf(account: string): number {
    return this.accounts.get(account)?.waiting ?? 0;
  }

  add(party: Party, job: J, first = false): void {
    let account = this.accounts.get(party.account);
    if (!account) {
      const owed = this.owed.get(party.account) ?? 0;
      this.owed.delete(party.account);
      account = { used: this.clock + owed, running: 0, waiting: 0, owners: new Map(), clock: 0 };
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
    account.waiting++;
    this.waitingTotal++;
  }

  /** Takes `job` back out of the waiting (its caller gave up); false when it was not waiting. */
  remove(party: Party, job: J): boolean {
    const account = this.accounts.get(party.account);
    const owner = account?.owners.get(party.owner);
    const at = owner?.waiting.indexOf(job) ?? -1;
    if (!account || !owner || at < 0) return false;
    owner.waiting.splice(at, 1);
    account.waiting--;
    this.waitingTotal--;
    this.forget(party.account, account, party.owner, owner);
    return true;
  }

  /**
   * The next run, for a free worker: of the accounts with a run that may go (see the top), the
   * one that has used least, those on fewer than `share` workers first; then its owner that has
   * used least. `behind`: only a run of that account's, of an owner known quick while the account
   * has no strike: one to wait on a worker behind the account's own quick code (see `more`).
   */
  next(share: number, behind?: string): Turn<J> | undefined {
    const quickOnly = behind !== undefined;
    const uncleanFull = this.uncleanRunning >= share;
    let chosen: [string, Account, [string, Owner]] | undefined;
    let chosenUnder = false;
    for (const [name, account] of this.accounts) {
      if (!account.waiting || (quickOnly && name !== behind)) continue;
      const under = account.running < share;
      if (chosen && chosenUnder && !under) continue;
      const struck = (this.strikes.get(name) ?? 0) > this.now();
      let pick: [string, Owner] | undefined;
      for (const entry of account.owners) {
        const o = entry[1];
        if (!o.waiting.length) continue;
        const quick = o.lastMs !== null && o.lastMs <= this.quickMs;
        const clean = !struck && (o.lastMs === null || quick);
        // On its share already, an account gets another worker only for code known quick.
        if (under && !quickOnly ? !clean && uncleanFull : struck || !quick) continue;
        if (!pick || o.used < pick[1].used) pick = entry;
      }
      if (!pick) continue;
      if (!chosen || (under && !chosenUnder) || account.used < chosen[1].used) {
        chosen = [name, account, pick];
        chosenUnder = under;
      }
    }
    if (!chosen) return undefined;
    const [name, account, [ownerName, owner]] = chosen;
    const struck = (this.strikes.get(name) ?? 0) > this.now();
    const clean = !struck && (owner.lastMs === null || owner.lastMs <= this.quickMs);
    this.clock = Math.max(this.clock, account.used);
    account.clock = Math.max(account.clock, owner.used);
    return this.start({ account: name, owner: ownerName }, account, owner, clean);
  }

  /**
   * Up to `max` more of `turn`'s owner's waiting runs to go with it on the same worker, one after
   * another: only for code known quick of an account not struck (a batch of those costs others
   * little more than one run), and none otherwise. Each is charged and counted as `next` does.
   */
  more(turn: Turn<J>, max: number): Turn<J>[] {
    const account = this.accounts.get(turn.party.account);
    const owner = account?.owners.get(turn.party.owner);
    if (!account || !owner || !this.quick(turn.party, owner)) return [];
    const taken: Turn<J>[] = [];
    while (taken.length < max && owner.waiting.length)
      taken.push(this.start(turn.party, account, owner, true));
    return taken;
  }

  /** Whether `party`'s owner is known quick now, and its account has no strike. */
  quickNow(party: Party): boolean {
    const owner = this.accounts.get(party.account)?.owners.get(party.owner);
    return owner !== undefined && this.quick(party, owner);
  }

  private quick(party: Party, owner: Owner): boolean {
    const struck = (this.strikes.get(party.account) ?? 0) > this.now();
    return !struck && owner.lastMs !== null && owner.lastMs <= this.quickMs;
  }

  /** The owner's next waiting run, started: charged its estimate and counted as running. */
  private start(party: Party, account: Account, owner: Owner, clean: boolean): Turn<J> {
    const charged = owner.lastMs ?? FIRST_ESTIMATE_MS;
    account.used += charged;
    owner.used += charged;
    account.running++;
    owner.running++;
    account.waiting--;
    this.waitingTotal--;
    if (!clean) this.uncleanRunning++;
    return { job: owner.waiting.shift() as J, party, charged, clean, quick: this.quick(party, owner) };
  }

  /** `turn`'s run ended after `ms` of its worker's time; `overran`: for its time or memory. */
  done(turn: Turn<J>, ms: number, overran = false): void {
    if (!turn.clean) this.uncleanRunning--;
    if (overran) remember(this.strikes, turn.party.account, this.now() + STRIKE_MS);
    remember(this.lastRun, runKey(turn.party), ms);
    const account = this.accounts.get(turn.party.account);
    const owner = account?.owners.get(turn.party.owner);
    if (!account || !owner) return;
    account.used += ms - turn.charged;
    owner.used += ms - turn.charged;
    owner.lastMs = ms;
    this.end(turn, account, owner);
  }

  /**
   * `turn`'s run did not run (its worker gave it back unstarted, or was ended with it waiting
   * behind another): its charge is refunded, and its owner's last run time stands, so what a
   * batch cut short leaves behind never makes slow code look quick again.
   */
  undone(turn: Turn<J>): void {
    if (!turn.clean) this.uncleanRunning--;
    const account = this.accounts.get(turn.party.account);
    const owner = account?.owners.get(turn.party.owner);
    if (!account || !owner) return;
    account.used -= turn.charged;
    owner.used -= turn.charged;
    this.end(turn, account, owner);
  }

  private end(turn: Turn<J>, account: Account, owner: Owner): void {
    account.running--;
    owner.running--;
    this.forget(turn.party.account, account, turn.party.owner, owner);
  }

  /** Every run waiting, taken out (the pool is closing). */
  drain(): J[] {
    const all = [...this.accounts.values()].flatMap((a) =>
      [...a.owners.values()].flatMap((o) => o.waiting.splice(0) as J[]),
    );
    for (const [name, account] of this.accounts) {
      account.waiting = 0;
      for (const [ownerName, owner] of account.owners) this.forget(name, account, ownerName, owner);
    }
    this.waitingTotal = 0;
    return all;
  }

  private forget(name: string, account: Account, ownerName: string, owner: Owner): void {
    if (owner.running || owner.waiting.length) return;
    account.owners.delete(ownerName);
    if (account.running || account.owners.size) return;
    this.accounts.delete(name);
    if (account.used > this.clock) remember(this.owed, name, account.used - this.clock);
  }
}

const runKey = (party: Party) => `${party.account}/${party.owner}`;

/** Sets `key` in `map` as its most recent entry, the least recent dropped past REMEMBERED. */
function remember(map: Map<string, number>, key: string, value: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value as string);
}
