// `npm run bench`: the benchmark (packages/bench). Makes sure dependencies, PostgreSQL and
// RabbitMQ are there, then runs it with the same arguments (`npm run bench -- --quick`).
// Node built-ins only, since this runs before any dependency is installed.
import { spawn } from "node:child_process";
import { ensureBackingServices, ensureDependencies, root } from "./lib/setup.mjs";

ensureDependencies();
await ensureBackingServices();

const child = spawn(
  process.execPath,
  ["--import", "tsx", "packages/bench/src/main.ts", ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit" },
);
// Ctrl-C reaches the benchmark as well (same process group); it stops what it started, then
// exits. A signal sent to this script alone is passed on.
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 1)));
