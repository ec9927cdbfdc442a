import { describe, expect, it } from "vitest";
import { groupMemory, parseMemory } from "./memory.ts";

const status = (rss: string | null) =>
  [
    "Name:\tnode",
    "Umask:\t0022",
    "State:\tS (sleeping)",
    "VmPeak:\t 1234567 kB",
    "VmHWM:\t  204800 kB",
    ...(rss === null ? [] : [`VmRSS:\t${rss} kB`]),
    "RssAnon:\t   90000 kB",
    "RssFile:\t   40000 kB",
    "RssShmem:\t   23600 kB",
    "Threads:\t11",
  ].join("\n");

describe("parseMemory", () => {
  it("reads VmRSS and VmHWM of /proc/<pid>/status in MB", () => {
    expect(parseMemory(status("  153600"))).toEqual({ rssMb: 150, peakMb: 200, shmemMb: 23600 / 1024 });
  });

  it("is null for a process without resident memory (a kernel thread)", () => {
    expect(parseMemory(status(null))).toBeNull();
    expect(parseMemory("")).toBeNull();
  });

  it("does not take another field that ends in the same name", () => {
    expect(parseMemory(`RssVmRSS:\t999 kB\n${status("1024")}`)).toMatchObject({ rssMb: 1 });
  });
});

describe("groupMemory", () => {
  it("counts the memory the processes share once, as the largest share any of them holds", () => {
    // A postmaster and two backends over 128 MB of shared buffers, touched in part by each.
    const g = groupMemory([
      { rssMb: 30, shmemMb: 10 },
      { rssMb: 140, shmemMb: 128 },
      { rssMb: 100, shmemMb: 90 },
    ]);
    expect(g).toEqual({ summedRssMb: 270, residentMb: 20 + 12 + 10 + 128, processes: 3 });
  });

  it("is each one's VmRSS summed when nothing is shared, and null for no process", () => {
    expect(groupMemory([{ rssMb: 300, shmemMb: 0 }])).toEqual({
      summedRssMb: 300,
      residentMb: 300,
      processes: 1,
    });
    expect(groupMemory([])).toBeNull();
  });
});
