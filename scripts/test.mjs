// `npm test`: lint, typecheck, then every test (unit, integration, end-to-end) against real
// PostgreSQL and RabbitMQ. Exits non-zero on any failure.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  ensureBackingServices,
  ensureDependencies,
  pnpmCommand,
  readJson,
  root,
  run,
  say,
} from "./lib/setup.mjs";

ensureDependencies();
await ensureBackingServices();

const [pnpm, ...pnpmArgs] = pnpmCommand();
mkdirSync(join(root, ".herald"), { recursive: true });
const results = join(root, ".herald", "test-results.json");
const steps = [
  ["lint (biome)", pnpm, [...pnpmArgs, "exec", "biome", "check", "."]],
  ["typecheck (tsc)", pnpm, [...pnpmArgs, "exec", "tsc", "-p", "tsconfig.json", "--noEmit"]],
  [
    "tests (vitest)",
    pnpm,
    [
      ...pnpmArgs,
      "exec",
      "vitest",
      "run",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${results}`,
      ...process.argv.slice(2),
    ],
  ],
];
for (const [name, cmd, args] of steps) {
  say(name);
  const status = run(cmd, args);
  if (name.startsWith("tests")) {
    const report = readJson(results, null);
    if (report)
      console.log(
        `\nTests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`,
      );
  }
  if (status !== 0) {
    console.error(`\n${name} failed.`);
    process.exit(status);
  }
}
