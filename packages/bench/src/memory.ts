import { readFileSync } from "node:fs";

/** Resident memory of a process from `/proc/<pid>/status`, in MB: now (VmRSS) and at its peak (VmHWM). */
export function readMemory(pid: number): { rssMb: number; peakMb: number } | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return null;
  }
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
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
