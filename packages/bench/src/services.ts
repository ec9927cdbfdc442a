import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";

export type ServiceKind = "api-gateway" | "dispatcher" | "sender";

/** Lines a service printed at warn or above (pino levels 40+) or that were not JSON. */
export type ServiceOutput = {
  service: string;
  log: string;
  lines: number;
  problems: number;
  samples: string[];
};

export type Service = {
  label: string;
  pid: number;
  readyUrl: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running: () => boolean;
  output: () => ServiceOutput;
  /** The last lines it printed, for an error message. */
  tail: () => string;
  kill: (signal: NodeJS.Signals) => void;
};

/** How a profile runs a service: `node <args>` in `cwd`. */
export type Launch = (kind: ServiceKind) => { cwd: string; args: string[] };

/** As `npm start` runs a service: its TypeScript sources through tsx, from the build's root. */
export const fromSource =
  (root: string, nodeFlags: string[]): Launch =>
  (kind) => ({
    cwd: root,
    args: [...nodeFlags, "--import", "tsx", join("services", kind, "src", "main.ts")],
  });

/**
 * As the images run a service (the Dockerfile's CMD): its bundle (`bundle`, where its build puts
 * it), plain node, from the tree `npm run build` wrote for it under `buildDir`.
 */
export const fromBuild =
  (buildDir: string, nodeFlags: string[], bundle: (kind: ServiceKind) => string): Launch =>
  (kind) => ({
    cwd: join(buildDir, kind),
    args: ["--enable-source-maps", ...nodeFlags, bundle(kind)],
  });

export type SpawnOptions = { launch: Launch; logDir: string; cpuProfDir: string | null };

/** A service as its own process, as `launch` says; its output goes to `<logDir>/<label>.log`. */
export function spawnService(
  kind: ServiceKind,
  label: string,
  env: NodeJS.ProcessEnv,
  readyUrl: string,
  options: SpawnOptions,
): Service {
  const profile = options.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`] : [];
  const { cwd, args } = options.launch(kind);
  const child: ChildProcess = spawn(
    process.execPath,
    [...profile, ...args],
    // Its own process group: Ctrl-C reaches main only, which stops each service once.
    { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  mkdirSync(options.logDir, { recursive: true });
  const logPath = join(options.logDir, `${label}.log`);
  const log = createWriteStream(logPath);
  const recent: string[] = [];
  const summary: ServiceOutput = { service: label, log: logPath, lines: 0, problems: 0, samples: [] };
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      log.write(`${line}\n`);
      summary.lines++;
      recent.push(line);
      if (recent.length > 40) recent.shift();
      if (isProblem(line)) {
        summary.problems++;
        if (summary.samples.length < 5) summary.samples.push(line.slice(0, 500));
      }
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      log.end();
      resolve({ code, signal });
    }),
  );
  return {
    label,
    pid: child.pid ?? 0,
    readyUrl,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    output: () => ({ ...summary, samples: [...summary.samples] }),
    tail: () => recent.join("\n"),
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

function isProblem(line: string): boolean {
  try {
    const entry = JSON.parse(line) as { level?: unknown };
    return typeof entry.level === "number" && entry.level >= 40;
  } catch {
    return line.trim() !== "";
  }
}

/** Resolves once `GET readyUrl` answers 200; rejects if the service exits or 60 s pass. */
export async function waitReady(service: Service, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!service.running())
      throw new Error(`${service.label} exited before it was ready:\n${service.tail()}`);
    const ok = await fetch(service.readyUrl).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`${service.label} not ready after ${timeoutMs / 1000} s:\n${service.tail()}`);
    await sleep(200);
  }
}

/** SIGTERM to each (a graceful stop), then SIGKILL to whichever is still running after 15 s. */
export async function stopServices(services: Service[], graceMs = 15_000): Promise<void> {
  for (const s of services) s.kill("SIGTERM");
  await Promise.race([Promise.all(services.map((s) => s.exited)), sleep(graceMs)]);
  for (const s of services) s.kill("SIGKILL");
  await Promise.all(services.map((s) => s.exited));
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}
