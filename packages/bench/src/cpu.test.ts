import { describe, expect, it } from "vitest";
import { byComm, byPid, cpuFigures, groupTicks, type ProcStat, parseStat, type Snapshot } from "./cpu.ts";

/** A /proc/<pid>/stat line with the fields cpu.ts reads; the others are zeros. */
function statLine(p: {
  pid: number;
  comm: string;
  ppid?: number;
  utime?: number;
  stime?: number;
  cutime?: number;
  cstime?: number;
  start?: number;
}): string {
  const fields = Array(52 - 2).fill("0");
  fields[0] = "S"; // field 3
  fields[4 - 3] = String(p.ppid ?? 1);
  fields[14 - 3] = String(p.utime ?? 0);
  fields[15 - 3] = String(p.stime ?? 0);
  fields[16 - 3] = String(p.cutime ?? 0);
  fields[17 - 3] = String(p.cstime ?? 0);
  fields[22 - 3] = String(p.start ?? 0);
  return `${p.pid} (${p.comm}) ${fields.join(" ")}\n`;
}

function snap(uptimeTicks: number, ...lines: string[]): Snapshot {
  const processes = new Map<number, ProcStat>();
  for (const line of lines) {
    const s = parseStat(line)!;
    processes.set(s.pid, s);
  }
  return { uptimeTicks, processes };
}

describe("parseStat", () => {
  it("reads the fields after the command name, whatever the name holds", () => {
    const line = statLine({
      pid: 42,
      comm: "a (b) c",
      ppid: 7,
      utime: 10,
      stime: 5,
      cutime: 3,
      cstime: 2,
      start: 900,
    });
    expect(parseStat(line)).toEqual({
      pid: 42,
      comm: "a (b) c",
      ppid: 7,
      ownTicks: 15,
      childTicks: 5,
      startTicks: 900,
    });
  });

  it("reads a real line of the kernel's", () => {
    const real =
      "5497 (postgres) S 1 5497 5497 0 -1 4194560 2655 17036 0 0 8 12 31 40 20 0 1 0 41237 224456704 7914 18446744073709551615 1 1 0 0 0 0 0 4194304 19976 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0";
    expect(parseStat(real)).toMatchObject({
      pid: 5497,
      comm: "postgres",
      ppid: 1,
      ownTicks: 20,
      childTicks: 71,
      startTicks: 41237,
    });
  });

  it("gives null for what is not a stat line", () => {
    expect(parseStat("")).toBeNull();
    expect(parseStat("12 (x)")).toBeNull();
  });
});

describe("groupTicks", () => {
  const postgres = byComm("postgres", "postgres");

  it("counts what each process spent between the two snapshots", () => {
    const start = snap(1000, statLine({ pid: 1, comm: "postgres", utime: 100, stime: 50, start: 10 }));
    const end = snap(1300, statLine({ pid: 1, comm: "postgres", utime: 160, stime: 70, start: 10 }));
    expect(groupTicks(postgres, start, end)).toEqual({ ticks: 80, missed: 0, lost: 0 });
  });

  it("counts a process that started in the window from 0, and not one it missed at the start", () => {
    const start = snap(1000, statLine({ pid: 1, comm: "postgres", start: 10 }));
    const end = snap(
      1300,
      statLine({ pid: 1, comm: "postgres", start: 10 }),
      statLine({ pid: 2, comm: "postgres", ppid: 1, utime: 30, stime: 10, start: 1100 }),
      statLine({ pid: 3, comm: "postgres", ppid: 1, utime: 500, start: 999 }),
    );
    expect(groupTicks(postgres, start, end)).toEqual({ ticks: 40, missed: 1, lost: 0 });
  });

  it("counts an exited backend's time in the window through its parent's children's time", () => {
    // Backend 2 had 40 ticks at the start, exited at 70 (and 5 of its own children's): the
    // postmaster's cutime + cstime took in all 75 when it waited for it; 35 were in the window.
    const start = snap(
      1000,
      statLine({ pid: 1, comm: "postgres", utime: 10, cutime: 100, start: 10 }),
      statLine({ pid: 2, comm: "postgres", ppid: 1, utime: 40, start: 500 }),
    );
    const end = snap(1300, statLine({ pid: 1, comm: "postgres", utime: 12, cutime: 175, start: 10 }));
    expect(groupTicks(postgres, start, end)).toEqual({ ticks: 2 + 75 - 40, missed: 0, lost: 0 });
  });

  it("loses an exited process whose parent is not in the group, and tells", () => {
    const start = snap(1000, statLine({ pid: 2, comm: "postgres", ppid: 99, utime: 40, start: 500 }));
    const end = snap(1300);
    expect(groupTicks(postgres, start, end)).toEqual({ ticks: 0, missed: 0, lost: 1 });
  });

  it("reads a reused pid as one process gone and another new", () => {
    const start = snap(
      1000,
      statLine({ pid: 1, comm: "postgres", start: 10 }),
      statLine({ pid: 5, comm: "postgres", ppid: 1, utime: 40, start: 500 }),
    );
    const end = snap(
      1300,
      statLine({ pid: 1, comm: "postgres", cutime: 50, start: 10 }),
      statLine({ pid: 5, comm: "postgres", ppid: 1, utime: 7, start: 1200 }),
    );
    // The old 5: 50 at its exit, 40 of it before the window; the new 5: 7, all in the window.
    expect(groupTicks(postgres, start, end)).toEqual({ ticks: 10 + 7, missed: 0, lost: 0 });
  });

  it("keeps to its group", () => {
    const start = snap(
      1000,
      statLine({ pid: 1, comm: "postgres", start: 10 }),
      statLine({ pid: 8, comm: "node", start: 10 }),
    );
    const end = snap(
      1300,
      statLine({ pid: 1, comm: "postgres", start: 10 }),
      statLine({ pid: 8, comm: "node", utime: 90, start: 10 }),
    );
    expect(groupTicks(postgres, start, end).ticks).toBe(0);
    expect(groupTicks(byPid("sender", 8), start, end).ticks).toBe(90);
  });
});

describe("cpuFigures", () => {
  it("turns ticks into ms per delivery, part by part and summed", () => {
    const start = snap(
      1000,
      statLine({ pid: 8, comm: "node", utime: 100, start: 10 }),
      statLine({ pid: 9, comm: "node", utime: 100, start: 10 }),
      statLine({ pid: 1, comm: "postgres", utime: 100, start: 10 }),
      statLine({ pid: 3, comm: "beam.smp", utime: 100, start: 10 }),
    );
    const end = snap(
      1300,
      statLine({ pid: 8, comm: "node", utime: 160, start: 10 }), // 600 ms
      statLine({ pid: 9, comm: "node", utime: 130, start: 10 }), // 300 ms
      statLine({ pid: 1, comm: "postgres", utime: 190, stime: 30, start: 10 }), // 1,200 ms
      statLine({ pid: 3, comm: "beam.smp", utime: 130, start: 10 }), // 300 ms
    );
    const groups = [
      byPid("api-gateway", 8),
      byPid("sender", 9),
      byComm("postgres", "postgres"),
      byComm("rabbitmq", "beam.smp"),
    ];
    const f = cpuFigures(groups, start, end, 3000, 1200, 100);
    expect(f.parts).toEqual([
      { name: "api-gateway", cpuMs: 600, perDeliveryMs: 0.5 },
      { name: "sender", cpuMs: 300, perDeliveryMs: 0.25 },
      { name: "postgres", cpuMs: 1200, perDeliveryMs: 1 },
      { name: "rabbitmq", cpuMs: 300, perDeliveryMs: 0.25 },
    ]);
    expect(f.wholeStack).toEqual({ name: "whole stack", cpuMs: 2400, perDeliveryMs: 2 });
    expect(f.cores).toBe(0.8);
    expect(f).toMatchObject({ windowSeconds: 3, deliveries: 1200, missed: 0, lost: 0 });
    // Nothing delivered: no figure per delivery.
    expect(cpuFigures(groups, start, end, 3000, 0, 100).wholeStack.perDeliveryMs).toBeNull();
  });
});
