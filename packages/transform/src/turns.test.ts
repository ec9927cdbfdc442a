import { describe, expect, it } from "vitest";
import { type Party, type Turn, Turns } from "./turns.ts";

const party = (account: string, owner = account): Party => ({ account, owner });

/** Serves one worker `rounds` times: each turn taken, run for its job's `ms`, ended. Returns the jobs in order. */
function serve(turns: Turns<{ name: string; ms: number }>, rounds: number, share = 1): string[] {
  const order: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const turn = turns.next(share);
    if (!turn) break;
    order.push(turn.job.name);
    turns.done(turn, turn.job.ms);
  }
  return order;
}

describe("turns", () => {
  it("serves accounts by the time their runs took, not by their count", () => {
    const turns = new Turns<{ name: string; ms: number }>(5);
    for (let i = 0; i < 5; i++) turns.add(party("slow"), { name: "slow", ms: 100 });
    for (let i = 0; i < 300; i++) turns.add(party("quick"), { name: "quick", ms: 1 });
    const order = serve(turns, 150);
    // One 100 ms run buys the quick account about a hundred 1 ms runs before the next.
    expect(order.filter((n) => n === "slow").length).toBe(2);
    const between = order.indexOf("slow", order.indexOf("slow") + 1) - order.indexOf("slow") - 1;
    expect(between).toBeGreaterThanOrEqual(99);
    expect(between).toBeLessThanOrEqual(101);
  });

  it("gives an account with many owners one account's share, its owners taking turns within it", () => {
    const turns = new Turns<{ name: string; ms: number }>(5);
    for (let e = 0; e < 10; e++) turns.add(party("many", `ep_${e}`), { name: `many/ep_${e}`, ms: 1 });
    for (let i = 0; i < 10; i++) turns.add(party("one"), { name: "one", ms: 1 });
    const order = serve(turns, 20);
    // Alternating accounts: never two of the many-endpoint account's runs in a row.
    for (let i = 1; i < order.length; i++)
      expect(order[i]!.startsWith("many") && order[i - 1]!.startsWith("many")).toBe(false);
    expect(new Set(order.filter((n) => n.startsWith("many"))).size).toBe(10);
  });

  it("keeps a worker from an account at its share while another account waits", () => {
    const turns = new Turns<string>(5);
    // Both have run quick code before: their runs are clean.
    for (const a of ["a", "b"]) {
      turns.add(party(a), a);
      turns.done(turns.next(1) as Turn<string>, 1);
    }
    for (let i = 0; i < 4; i++) turns.add(party("a"), "a");
    turns.next(1);
    turns.add(party("b"), "b");
    // a runs on its share of one: b comes first, though it has used no less time.
    expect(turns.next(1)?.job).toBe("b");
  });

  it("lets an account alone use every worker for code known quick only: not code not yet run, nor code that took half its budget", () => {
    const turns = new Turns<string>(5);
    for (let i = 0; i < 6; i++) turns.add(party("quick"), "quick");
    const first = turns.next(1) as Turn<string>;
    // Not yet run: the worker kept for others stays free until it is known quick.
    expect(turns.next(1)).toBeUndefined();
    turns.done(first, 2);
    expect([turns.next(1)?.job, turns.next(1)?.job]).toEqual(["quick", "quick"]);

    const slow = new Turns<string>(5);
    for (let i = 0; i < 6; i++) slow.add(party("slow"), "slow");
    slow.done(slow.next(1) as Turn<string>, 8);
    expect(slow.next(1)?.job).toBe("slow");
    expect(slow.next(1)).toBeUndefined();
  });

  it("gives a run to wait behind an account's quick code only of that account's code known quick", () => {
    let now = 0;
    const turns = new Turns<string>(5, () => now);
    for (const [account, owner, ms] of [
      ["acct", "quick", 1],
      ["acct", "slow", 8],
      ["other", "other", 1],
    ] as const) {
      turns.add(party(account, owner), owner);
      turns.done(turns.next(2) as Turn<string>, ms);
    }
    turns.add(party("other"), "other");
    turns.add(party("acct", "new"), "not yet run");
    turns.add(party("acct", "slow"), "slow");
    turns.add(party("acct", "quick"), "quick");
    turns.add(party("acct", "quick"), "quick again");
    const behind = turns.next(2, "acct") as Turn<string>;
    expect(behind).toMatchObject({ job: "quick", quick: true });
    // Left of the account: code not known quick (and the other account's quick code is another's).
    const again = turns.next(2, "acct") as Turn<string>;
    expect(again.job).toBe("quick again");
    expect(turns.next(2, "acct")).toBeUndefined();
    expect(turns.next(2, "other")?.job).toBe("other");
    // An overrun strikes the account: its code is not quick now, even code whose last run was.
    turns.done(behind, 1, true);
    expect(turns.quickNow(party("acct", "quick"))).toBe(false);
    now += 60_001;
    expect(turns.quickNow(party("acct", "quick"))).toBe(true);
  });

  it("leaves an owner's last run time as it was when a run is given back unrun", () => {
    const turns = new Turns<string>(5);
    turns.add(party("acct", "ep"), "a");
    turns.done(turns.next(2) as Turn<string>, 30); // slow
    turns.add(party("acct", "ep"), "b");
    const unrun = turns.next(2) as Turn<string>;
    turns.undone(unrun);
    turns.add(party("acct", "ep"), "c");
    expect(turns.next(2)).toMatchObject({ charged: 30, clean: false });
  });

  it("keeps the last worker from a primed account: one slow run strikes all its runs unclean for a while", () => {
    let now = 0;
    const turns = new Turns<string>(5, () => now);
    // Each of the account's endpoints ran quick once; then one of them overran.
    for (const ep of ["p1", "p2", "p3"]) {
      turns.add(party("attacker", ep), ep);
      turns.done(turns.next(1) as Turn<string>, 1);
    }
    turns.add(party("attacker", "p1"), "p1");
    turns.done(turns.next(1) as Turn<string>, 900, true);
    // Alone, the account's quick-looking endpoints still get one worker only.
    turns.add(party("attacker", "p2"), "p2");
    turns.add(party("attacker", "p3"), "p3");
    expect(turns.next(1)?.job).toMatch(/^p[23]$/);
    expect(turns.next(1)).toBeUndefined();
    // The strike wears off: quick runs may use every worker again.
    now += 61_000;
    expect(turns.next(1)?.job).toMatch(/^p[23]$/);
  });

  it("lets unclean runs of several accounts hold all workers but one, never all", () => {
    const turns = new Turns<string>(5);
    // Three accounts that each overran once: struck, their runs unclean.
    for (const a of ["x", "y", "z"]) {
      turns.add(party(a), a);
      turns.done(turns.next(2) as Turn<string>, 900, true);
      turns.add(party(a), a);
    }
    expect(turns.next(2)).toBeDefined();
    expect(turns.next(2)).toBeDefined();
    expect(turns.next(2)).toBeUndefined();
  });

  it("remembers what an account used past the others when it went idle", () => {
    const turns = new Turns<{ name: string; ms: number }>(5);
    turns.add(party("heavy"), { name: "heavy", ms: 500 });
    turns.done(turns.next(1) as Turn<{ name: string; ms: number }>, 500);
    // heavy is idle now; light starts waiting, then heavy again.
    for (let i = 0; i < 3; i++) turns.add(party("light"), { name: "light", ms: 1 });
    turns.add(party("heavy"), { name: "heavy", ms: 500 });
    const order = serve(turns, 4);
    expect(order).toEqual(["light", "light", "light", "heavy"]);
  });

  it("starts an account that was idle at the others' time: time not asked for is not saved up", () => {
    const turns = new Turns<{ name: string; ms: number }>(5);
    for (let i = 0; i < 100; i++) turns.add(party("busy"), { name: "busy", ms: 10 });
    serve(turns, 50);
    for (let i = 0; i < 10; i++) turns.add(party("late"), { name: "late", ms: 10 });
    const order = serve(turns, 20);
    // The newcomer takes turns with the busy account; it is not given the 500 ms it did not use.
    expect(order.filter((n) => n === "late").length).toBe(10);
    expect(order.filter((n) => n === "busy").length).toBe(10);
  });

  it("charges a run its owner's last run time when it starts, so runs out at once are not free", () => {
    const turns = new Turns<string>(5);
    for (let i = 0; i < 3; i++) turns.add(party("a"), "a");
    const first = turns.next(4) as Turn<string>;
    turns.done(first, 50);
    const second = turns.next(4) as Turn<string>;
    expect([first.charged, second.charged]).toEqual([1, 50]);
    // b starts where a was when served (50 ms); a's run still out has been charged 50 more.
    turns.add(party("b"), "b");
    expect(turns.next(4)?.job).toBe("b");
  });

  it("forgets what it no longer waits for, and hands back all that waits when drained", () => {
    const turns = new Turns<string>(5);
    turns.add(party("a"), "one");
    turns.add(party("a"), "two");
    expect(turns.remove(party("a"), "one")).toBe(true);
    expect(turns.remove(party("a"), "one")).toBe(false);
    expect(turns.waiting(party("a"))).toBe(1);
    turns.add(party("b", "ep"), "three", true);
    expect(turns.drain().sort()).toEqual(["three", "two"]);
    expect(turns.next(1)).toBeUndefined();
  });
});
