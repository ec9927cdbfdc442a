import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { topologyNames } from "@herald/broker";
import { migrate } from "@herald/db";
import { createRanges } from "@herald/db/lifecycle";
import { createPool, inTransaction } from "@herald/db/pool";
import SERVICE_NODE_FLAGS from "@herald/runtime/service-node-flags.json" with { type: "json" };
import { say } from "./progress.ts";
import type { ServiceKind } from "./services.ts";

/**
 * A build of Herald the benchmark can start: this checkout (`change`), or with `--against <ref>`
 * the ref's (`base`), checked out in a worktree of its own with its own dependencies. Each
 * build brings what differs between versions: its migrations, its queues' names, its services'
 * sources and bundles and the node flags they run with. The load, the apps and the measurement
 * stay this checkout's.
 */
export type Build = {
  role: "change" | "base";
  root: string;
  /** As given on the command line (`HEAD` for this checkout). */
  ref: string;
  commit: string;
  /** This checkout only: files differ from its commit. */
  dirty: boolean;
  /** The node flags every service of this build runs with. */
  nodeFlags: string[];
  /** Where `npm run build` puts a service's bundle, relative to its tree. */
  bundle: (kind: ServiceKind) => string;
  /** The queues and exchanges of this build's topology under `prefix`. */
  topology: (prefix: string) => TopologyNames;
  /** Applies this build's migrations to an empty database and makes its partitions ahead. */
  migrate: (databaseUrl: string) => Promise<void>;
};

export type TopologyNames = {
  exchange: string;
  deadExchange: string;
  deadQueue: string;
  queues: Record<string, string>;
  delayQueue: (ms: number) => string;
};

/** The delivery log partitions a system at the default retention (30 days) holds: a month, today, two ahead. */
export const STEADY_RANGES = 33;
const DAY_MS = 86_400_000;

function git(root: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

function bundlesOf(root: string): (kind: ServiceKind) => string {
  let images: Record<string, { bundle?: string }> = {};
  try {
    images = JSON.parse(readFileSync(join(root, "scripts", "lib", "images.json"), "utf8"));
  } catch {}
  return (kind) => images[kind]?.bundle ?? join("services", kind, "dist", "main.mjs");
}

/** This checkout, as it is on disk. */
export function thisBuild(root: string): Build {
  let commit = "unknown";
  let dirty = false;
  try {
    commit = git(root, "rev-parse", "HEAD");
    dirty = git(root, "status", "--porcelain", "--untracked-files=no") !== "";
  } catch {}
  return {
    role: "change",
    root,
    ref: "HEAD",
    commit,
    dirty,
    nodeFlags: SERVICE_NODE_FLAGS,
    bundle: bundlesOf(root),
    topology: topologyNames,
    async migrate(databaseUrl) {
      await migrate(databaseUrl);
      const pool = createPool(databaseUrl, 1);
      try {
        await inTransaction(pool, (tx) => createRanges(tx, Date.now(), DAY_MS, STEADY_RANGES * DAY_MS));
      } finally {
        await pool.end();
      }
    },
  };
}

/** `node <args>` in `cwd`; rejects with its output when it fails. */
function runNode(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`node ${args.join(" ")} (in ${cwd}) failed (${signal ?? code}):\n${output}`)),
    );
  });
}

/** A command's output into `log`; rejects with its last lines when it fails. */
function runLogged(cmd: string, args: string[], cwd: string, log: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(log);
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, COREPACK_ENABLE_STRICT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tail = "";
    const keep = (d: Buffer) => {
      out.write(d);
      tail = (tail + d.toString()).slice(-3000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      out.end();
      if (code === 0) resolve();
      else reject(new Error(`${cmd} ${args.join(" ")} failed (${signal ?? code}); ${log} ends:\n${tail}`));
    });
  });
}

/** The worktrees `git worktree list` knows, by path, with their checked-out commit. */
function worktrees(root: string): Map<string, string> {
  const found = new Map<string, string>();
  let path: string | null = null;
  for (const line of git(root, "worktree", "list", "--porcelain").split("\n")) {
    if (line.startsWith("worktree ")) path = line.slice("worktree ".length);
    else if (line.startsWith("HEAD ") && path) found.set(path, line.slice("HEAD ".length));
  }
  return found;
}

/** Marks a worktree whose install finished, with the commit it was made for. */
const INSTALLED = join("node_modules", ".herald-bench-installed");

/**
 * The worktree of `ref` under `dir` (`<dir>/<commit>`): made with `git worktree add --detach`,
 * or reused when it is already there at that commit, reset to it (`git reset --hard`, `git clean
 * -fd`: files a run may have changed go, ignored ones such as node_modules and the Prisma
 * client stay). Its dependencies are installed from its own lockfile, as its own `npm start`
 * would (`pnpm install --frozen-lockfile`, whose postinstall generates its Prisma client), once.
 *
 * The worktree stays registered with git and on disk for the next run against the same commit,
 * the KEPT_WORKTREES last used ones are kept and older ones removed (`git worktree remove`);
 * `git worktree remove --force <dir>/<commit>` drops one by hand. One whose directory is gone is
 * pruned here (`git worktree prune`), and one in any other state is removed and made anew.
 */
export async function prepareWorktree(
  root: string,
  ref: string,
  dir: string,
): Promise<{ commit: string; path: string }> {
  let commit: string;
  try {
    commit = git(root, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`);
  } catch {
    throw new Error(`--against ${ref}: no such commit in ${root}`);
  }
  const path = join(dir, commit);
  await mkdir(dir, { recursive: true });
  git(root, "worktree", "prune");
  const known = worktrees(root);
  const reusable = known.get(path) === commit && existsSync(join(path, ".git"));
  if (reusable) {
    git(path, "reset", "--hard", "--quiet", commit);
    git(path, "clean", "-fd", "--quiet");
    say(`--against ${ref}: reusing the worktree ${relative(root, path)} (${commit.slice(0, 10)})`);
  } else {
    if (known.has(path)) git(root, "worktree", "remove", "--force", path);
    await rm(path, { recursive: true, force: true });
    git(root, "worktree", "prune");
    git(root, "worktree", "add", "--detach", "--quiet", path, commit);
    say(`--against ${ref}: checked ${commit.slice(0, 10)} out in ${relative(root, path)}`);
  }
  const marker = join(path, INSTALLED);
  const installed = existsSync(marker) && readFileSync(marker, "utf8").trim() === commit;
  if (!installed) {
    const log = join(dir, `${commit}.install.log`);
    say(
      `--against ${ref}: installing its dependencies from its lockfile (output in ${relative(root, log)})…`,
    );
    const [cmd, ...args] = await pnpmCommand();
    await runLogged(cmd!, [...args, "install", "--frozen-lockfile", "--reporter=append-only"], path, log);
    if (!existsSync(join(path, "packages", "db", "src", "generated")))
      await runLogged(cmd!, [...args, "--filter", "@herald/db", "generate"], path, `${log}.generate`);
    await writeFile(marker, `${commit}\n`);
  } else {
    const now = new Date();
    await utimes(marker, now, now);
  }
  await dropOldWorktrees(root, dir, path);
  return { commit, path };
}

/** Worktrees the benchmark keeps under its directory, the one in use included. */
const KEPT_WORKTREES = 3;

/** Removes the benchmark's worktrees under `dir` past the KEPT_WORKTREES last used (by their marker's time). */
async function dropOldWorktrees(root: string, dir: string, inUse: string): Promise<void> {
  const used = (path: string) => {
    try {
      return statSync(join(path, INSTALLED)).mtimeMs;
    } catch {
      return 0;
    }
  };
  const ours = [...worktrees(root).keys()]
    .filter(
      (path) =>
        path !== inUse &&
        relative(dir, path).split("/").length === 1 &&
        !relative(dir, path).startsWith(".."),
    )
    .sort((a, b) => used(b) - used(a));
  for (const path of ours.slice(KEPT_WORKTREES - 1)) {
    git(root, "worktree", "remove", "--force", path);
    await rm(`${path}.install.log`, { force: true });
    say(`removed the worktree ${relative(root, path)}, the least recently used`);
  }
}

/** pnpm as `npm start` runs it (scripts/lib/setup.mjs: installed 10.x, else through npx). */
async function pnpmCommand(): Promise<string[]> {
  const setupModule: string = "../../../scripts/lib/setup.mjs";
  const setup = (await import(setupModule)) as { pnpmCommand: () => string[] };
  return setup.pnpmCommand();
}

/** The first of `paths` (relative to `root`) that holds a JSON array of node flags. */
function nodeFlagsOf(root: string): string[] {
  for (const path of ["packages/runtime/service-node-flags.json", "scripts/lib/service-node-flags.json"]) {
    try {
      const flags = JSON.parse(readFileSync(join(root, path), "utf8"));
      if (Array.isArray(flags)) return flags.map(String);
    } catch {}
  }
  return [];
}

/**
 * The build of `ref`, from its worktree (`prepareWorktree`). Its migrations are applied as its
 * own `npm run migrate` applies them (its packages/db migrate CLI, through tsx, in a process of
 * its own), then its partitions made ahead by its own code (ranges.ts), if it has any.
 */
export async function baseBuild(root: string, ref: string, worktreesDir: string): Promise<Build> {
  const { commit, path } = await prepareWorktree(root, ref, worktreesDir);
  const topologyFile = join(path, "packages", "broker", "src", "topology.ts");
  if (!existsSync(topologyFile))
    throw new Error(
      `--against ${ref}: ${relative(root, topologyFile)} is missing; that build is too old to run here`,
    );
  const { topologyNames: names } = (await import(pathToFileURL(topologyFile).href)) as {
    topologyNames: (prefix: string) => TopologyNames;
  };
  return {
    role: "base",
    root: path,
    ref,
    commit,
    dirty: false,
    nodeFlags: nodeFlagsOf(path),
    bundle: bundlesOf(path),
    topology: names,
    async migrate(databaseUrl) {
      const env = { ...process.env, DATABASE_URL: databaseUrl };
      await runNode(["--import", "tsx", "src/migrateCli.ts"], join(path, "packages", "db"), env);
      await runNode(
        ["--import", "tsx", join(import.meta.dirname, "ranges.ts"), databaseUrl, String(STEADY_RANGES)],
        path,
      );
    },
  };
}
