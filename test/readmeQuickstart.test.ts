import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliEnv } from "./cli/cli.ts";
import { root } from "./support/dockerfile.ts";
import { startGateway, type TestGateway } from "./support/gateway.ts";

/**
 * The README's quickstart, run as written, from the repository root, on a machine without
 * pnpm: each `curl …` and `npx herald …` line of its shell blocks, against a gateway of this
 * test's own (HERALD_URL and HERALD_API_KEY set to it, as `npm start` prints them), must exit 0.
 */
const readme = readFileSync(join(root, "README.md"), "utf8");
const section = /^## Quickstart\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";

/** The shell blocks' commands, a line continued with `\` kept whole, comments and blanks left out. */
const commands = [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap(([, block = ""]) =>
  block
    .split(/(?<!\\)\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#")),
);

/**
 * Lines the test does not run, by what they start with: `npm start` (the test's gateway stands
 * in for it) and the `export` of the URL and the key (the test sets them, to its gateway's).
 */
const NOT_RUN = ["npm start", "export HERALD_URL="];
/** Commands that run until stopped: each must start (print its first line), then stop on Ctrl-C. */
const UNTIL_STOPPED = ["listen", "tail"];

/** A PATH with every command of this one except pnpm, so nothing can fall back to it. */
function pathWithoutPnpm(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-nopnpm-"));
  const linked = new Set<string>();
  for (const from of (process.env.PATH ?? "").split(delimiter)) {
    let names: string[];
    try {
      names = readdirSync(from);
    } catch {
      continue;
    }
    for (const name of names) {
      if (linked.has(name) || /^pnpm|^pnpx$/.test(name)) continue;
      linked.add(name);
      symlinkSync(join(from, name), join(dir, name));
    }
  }
  return dir;
}

let gw: TestGateway;
let env: NodeJS.ProcessEnv;
/** Ids the commands printed, for the placeholders of later ones (`ep_…`). */
const ids = new Map<string, string>();

beforeAll(async () => {
  gw = await startGateway();
  env = { ...cliEnv({ HERALD_URL: gw.url, HERALD_API_KEY: gw.key }), PATH: pathWithoutPnpm() };
});
afterAll(() => gw?.close());

type Outcome = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Whether it was still running when it was stopped (only commands that run until stopped). */
  stopped: boolean;
};

function sh(command: string, untilStopped: boolean): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // The command in a process group of its own, as a terminal's foreground job, so Ctrl-C
    // reaches all of it; `exec`: the shell that reads the line is the user's, not the job's.
    const child = spawn("/bin/sh", ["-c", `exec ${command}`], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let stopped = false;
    let closed = false;
    const signal = (name: NodeJS.Signals) => {
      if (!closed) process.kill(-child.pid!, name);
    };
    const started = () => {
      // Started once it printed a whole line: then Ctrl-C, as a person stops it.
      if (!untilStopped || stopped || closed || !/\n/.test(stdout + stderr)) return;
      stopped = true;
      signal("SIGINT");
    };
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
      started();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
      started();
    });
    // Whatever happens, nothing of it outlives the test: the group is killed after 60 s.
    const limit = setTimeout(() => signal("SIGKILL"), 60_000);
    child.on("error", reject);
    child.on("exit", () => {
      closed = true;
    });
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      resolve({ code, signal, stdout, stderr, stopped });
    });
  });
}

/** The command without its comments, its placeholders filled by ids printed before it. */
function filled(command: string): string {
  const code = command.replace(/[ \t]+#[^'"\n]*$/gm, "");
  return code.replace(/\b(ep)_…/g, (placeholder, prefix: string) => {
    const id = ids.get(prefix);
    if (!id) throw new Error(`nothing printed before fills ${placeholder} in: ${command}`);
    return id;
  });
}

describe("the README's quickstart", () => {
  it("has curl and npx herald lines, and nothing the test does not know how to run", () => {
    expect(commands.filter((c) => c.startsWith("curl ")).length).toBeGreaterThanOrEqual(3);
    expect(commands.filter((c) => c.startsWith("npx herald ")).length).toBeGreaterThanOrEqual(3);
    const unknown = commands.filter(
      (c) => !c.startsWith("curl ") && !c.startsWith("npx herald ") && !NOT_RUN.some((n) => c.startsWith(n)),
    );
    expect(unknown).toEqual([]);
    // No command may call pnpm: the README's commands must work without it.
    expect(commands.filter((c) => /\bpnpm\b/.test(c))).toEqual([]);
  });

  it("runs on a PATH with node, npx and curl, and no pnpm", () => {
    const which = (cmd: string) => spawnSync("/bin/sh", ["-c", `command -v ${cmd}`], { env }).status === 0;
    expect(["node", "npx", "curl"].filter((c) => !which(c))).toEqual([]);
    expect(which("pnpm")).toBe(false);
  });

  for (const command of commands.filter((c) => !NOT_RUN.some((n) => c.startsWith(n)))) {
    const untilStopped = UNTIL_STOPPED.includes(command.split(/\s+/)[2] ?? "");
    it(`runs: ${command.replace(/\\\n\s*/g, "").replace(/\s+#.*$/, "")}`, { timeout: 90_000 }, async () => {
      const { code, signal, stdout, stderr, stopped } = await sh(filled(command), untilStopped);
      const shown = `${command}\n${stdout}\n${stderr}`;
      if (untilStopped) {
        // It started: printed its first line and was still running then. Ctrl-C ends npx by
        // the signal, whatever herald's own exit code (0, packages/cli/README.md says).
        expect(stopped, shown).toBe(true);
        expect((stdout + stderr).trim(), shown).not.toBe("");
        expect(code === 0 || signal === "SIGINT", `${shown}\nexit ${code}, ${signal}`).toBe(true);
      } else expect(code, shown).toBe(0);
      if (command.startsWith("curl ")) {
        // curl exits 0 on any answer: the API's must be the object made, not an error.
        const body = JSON.parse(stdout);
        expect(body.error, stdout).toBeUndefined();
        const prefix = /^([a-z]+)_/.exec(String(body.id))?.[1];
        if (prefix) ids.set(prefix, body.id);
      }
    });
  }
});
