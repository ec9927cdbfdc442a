// `npm test`: lint, typecheck, then every test (unit, integration, end-to-end) against real
// PostgreSQL and RabbitMQ, then the failure tests that restart RabbitMQ, on their own.
// Exits non-zero on any failure. `npm test -- <files>` runs only those test files.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  ensureBackingServices,
  ensureChromium,
  ensureDependencies,
  ensureKubectl,
  ensureSdkBuilt,
  ensureWebBuilt,
  pnpmCommand,
  readJson,
  root,
  run,
  say,
} from "./lib/setup.mjs";

ensureDependencies();
await ensureBackingServices();
ensureChromium();
ensureKubectl();
// Always rebuilt: the browser tests must see the pages of this checkout.
ensureWebBuilt({ force: true });
ensureSdkBuilt();

const [pnpm, ...pnpmArgs] = pnpmCommand();
const exec = (...args) => [pnpm, [...pnpmArgs, "exec", ...args]];
mkdirSync(join(root, ".herald"), { recursive: true });
const only = process.argv.slice(2);

const suites = [
  ["tests (vitest)", "vitest.config.ts", only],
  ...(only.length
    ? []
    : [["failure tests (vitest, alone: they restart RabbitMQ)", "vitest.serial.config.ts", []]]),
];
const steps = [
  ["lint (biome)", ...exec("biome", "check", ".")],
  ["typecheck (tsc)", ...exec("tsc", "-p", "tsconfig.json", "--noEmit")],
  ["typecheck pages (tsc)", ...exec("tsc", "-p", "packages/web/tsconfig.json", "--noEmit")],
  ...suites.map(([name, config, files], i) => [
    name,
    ...exec(
      "vitest",
      "run",
      "--config",
      config,
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${join(root, ".herald", `test-results-${i}.json`)}`,
      ...files,
    ),
  ]),
];

const totals = { passed: 0, failed: 0, skipped: 0 };
function summary() {
  console.log(`\nTests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
}
for (const [name, cmd, args] of steps) {
  say(name);
  const status = run(cmd, args);
  const out = args.find((a) => a.startsWith("--outputFile.json="));
  if (out) {
    const report = readJson(out.slice("--outputFile.json=".length), null);
    if (report) {
      totals.passed += report.numPassedTests;
      totals.failed += report.numFailedTests;
      totals.skipped += report.numPendingTests;
    }
  }
  if (status !== 0) {
    if (out) summary();
    console.error(`\n${name} failed.`);
    process.exit(status);
  }
}
summary();
