import { readdirSync, readFileSync } from "node:fs";

/**
 * Resident memory from the text of `/proc/<pid>/status`, in MB: now (VmRSS) and at its peak
 * (VmHWM), and of what is resident now, the part in shared memory (RssShmem: PostgreSQL's shared
 * buffers, as far as this process touched them; 0 where the kernel does not say).
 * Null when it has no VmRSS (a kernel thread, or a process gone to zombie).
 */
export function parseMemory(status: string): { rssMb: number; peakMb: number; shmemMb: number } | null {
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  const rss = kb("VmRSS");
  if (!Number.isFinite(rss)) return null;
  const shmem = kb("RssShmem");
  return {
    rssMb: rss / 1024,
    peakMb: kb("VmHWM") / 1024,
    shmemMb: Number.isFinite(shmem) ? shmem / 1024 : 0,
  };
}

/** Resident memory of a process from `/proc/<pid>/status`, in MB: now (VmRSS) and at its peak (VmHWM). */
export function readMemory(pid: number): ReturnType<typeof parseMemory> {
  try {
    return parseMemory(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return null;
  }
}

/** The resident memory of a group of processes, in MB. */
export type GroupMemory = {
  /** Their VmRSS added up: shared pages count once for each process that touched them. */
  summedRssMb: number;
  /** Shared pages counted once: each one's VmRSS less its RssShmem, plus the largest RssShmem. */
  residentMb: number;
  processes: number;
};

/**
 * The resident memory of the processes of `memories` (parseMemory's). Their VmRSS summed counts
 * PostgreSQL's shared buffers once per backend that touched them (20 backends, 20 times), so it
 * grows as backends touch more of them, which is no leak. Counting shared memory once, as the
 * largest any of them holds, leaves what the group really adds: each one's own memory.
 */
export function groupMemory(memories: readonly { rssMb: number; shmemMb: number }[]): GroupMemory | null {
  if (memories.length === 0) return null;
  const summedRssMb = memories.reduce((s, m) => s + m.rssMb, 0);
  const shared = Math.max(...memories.map((m) => m.shmemMb));
  const own = memories.reduce((s, m) => s + m.rssMb - m.shmemMb, 0);
  return { summedRssMb, residentMb: own + shared, processes: memories.length };
}

/**
 * The memory (`groupMemory`) of every process named `comm`, as cpu.ts groups PostgreSQL and the
 * broker; null when there is none on this machine. A process that exits while being read is skipped.
 */
export function memoryOfComm(comm: string): GroupMemory | null {
  const memories: { rssMb: number; shmemMb: number }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== comm) continue;
      const m = parseMemory(readFileSync(`/proc/${entry}/status`, "utf8"));
      if (m) memories.push(m);
    } catch {}
  }
  return groupMemory(memories);
}

export type MemoryReport = { service: string; pid: number; peakMb: number; rssMb: number[] };

/** Samples VmRSS of each process every second; `finish` reads each one's VmHWM and stops. */
export function sampleMemory(processes: { label: string; pid: number }[]): { finish: () => MemoryReport[] } {
  const series = new Map(processes.map((p) => [p.pid, [] as number[]]));
  const sample = () => {
    for (const p of processes) {
      const m = readMemory(p.pid);
      if (m) series.get(p.pid)!.push(Math.round(m.rssMb * 10) / 10);
    }
  };
  sample();
  const timer = setInterval(sample, 1000);
  return {
    finish() {
      clearInterval(timer);
      return processes.map((p) => ({
        service: p.label,
        pid: p.pid,
        peakMb: Math.round((readMemory(p.pid)?.peakMb ?? Number.NaN) * 10) / 10,
        rssMb: series.get(p.pid)!,
      }));
    },
  };
}
