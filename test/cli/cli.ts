import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Runs the `herald` command as a user does: the package's bin (which builds the bundle when a
 * source is newer), in a child process, with its own profile file and no colours.
 */
export const BIN = fileURLToPath(new URL("../../packages/cli/bin/herald.mjs", import.meta.url));

export type Run = { code: number | null; stdout: string; stderr: string };

export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  for (const name of ["HERALD_URL", "HERALD_API_KEY", "HERALD_PROFILE"])
    if (!(name in extra)) delete env[name];
  env.HERALD_CONFIG ??= join(mkdtempSync(join(tmpdir(), "herald-cli-")), "config.json");
  return env;
}

/** `herald args…`; `bin` another herald to run (a shim or an installed one), as a command itself. */
export function herald(args: string[], env: NodeJS.ProcessEnv, input?: string, bin?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const [command, argv] = bin ? [bin, args] : [process.execPath, [BIN, ...args]];
    const child = spawn(command, argv, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c));
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? "");
  });
}

/** A long-running command (`listen`, `tail`): its output so far, a wait for a line, and a stop. */
export type Running = {
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Ctrl-C, and its exit code. */
  interrupt(): Promise<number | null>;
  /** Its exit code, once it ends by itself. */
  exited: Promise<number | null>;
};

export function start(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of waiters) w();
  };
  child.stdout!.on("data", (c: Buffer) => {
    stdout += c;
    wake();
  });
  child.stderr!.on("data", (c: Buffer) => {
    stderr += c;
    wake();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(stdout + stderr);
          if (!m) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(m[0]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} in:\n${stdout}\n${stderr}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async interrupt() {
      if (child.exitCode === null) child.kill("SIGINT");
      return exited;
    },
  };
}
