import { execFileSync } from "node:child_process";
import { createServer } from "node:net";

/**
 * For tests that run services as processes, several replicas each, as `npm start` does:
 * consecutive free ports, the process tree under a command, and each replica's metrics.
 */

/** `count` consecutive ports free right now on 127.0.0.1. */
export async function freePorts(count: number): Promise<number> {
  const free = (p: number) =>
    new Promise<boolean>((resolve) => {
      const server = createServer()
        .once("error", () => resolve(false))
        .listen(p, "127.0.0.1", () => server.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const all = await Promise.all(Array.from({ length: count }, (_, i) => free(base + i)));
    if (all.every(Boolean)) return base;
  }
}

/** The processes under a process (npm → sh → start.mjs → services), from ps, with what each runs. */
export function descendants(ancestor: number): { pid: number; service: string }[] {
  const rows = execFileSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)!)
    .map(([, pid, ppid, args]) => ({ pid: Number(pid), ppid: Number(ppid), args: args! }));
  const family = new Set([ancestor]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (family.has(row.ppid) && !family.has(row.pid)) {
        family.add(row.pid);
        grew = true;
      }
    }
  }
  return rows
    .filter((r) => family.has(r.pid))
    .filter((r) => r.pid !== ancestor)
    .map((r) => ({
      pid: r.pid,
      service:
        /services\/([\w-]+)\/src\/main\.ts/.exec(r.args)?.[1] ??
        (/^(\S*\/)?node\s.*scripts\/start\.mjs/.test(r.args) ? "start.mjs" : "other"),
    }));
}

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A counter of each replica, summed over the series `series` matches, from its GET /metrics. */
export async function perReplica(basePort: number, replicas: number, series: RegExp): Promise<number[]> {
  return Promise.all(
    Array.from({ length: replicas }, async (_, i) => {
      const text = await (await fetch(`http://127.0.0.1:${basePort + i}/metrics`)).text();
      return text
        .split("\n")
        .filter((line) => series.test(line))
        .reduce((n, line) => n + Number(line.split(" ").at(-1)), 0);
    }),
  );
}
