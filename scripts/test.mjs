// `npm test`: lint, typecheck, then every test (unit, integration, end-to-end) against real
// PostgreSQL and RabbitMQ. Exits non-zero on any failure.
import { ensureBackingServices, ensureDependencies, pnpmCommand, run, say } from "./lib/setup.mjs";

ensureDependencies();
await ensureBackingServices();

const [pnpm, ...pnpmArgs] = pnpmCommand();
const steps = [
  ["lint (biome)", pnpm, [...pnpmArgs, "exec", "biome", "check", "."]],
  ["typecheck (tsc)", pnpm, [...pnpmArgs, "exec", "tsc", "-p", "tsconfig.json", "--noEmit"]],
  ["tests (vitest)", pnpm, [...pnpmArgs, "exec", "vitest", "run", ...process.argv.slice(2)]],
];
for (const [name, cmd, args] of steps) {
  say(name);
  const status = run(cmd, args);
  if (status !== 0) {
    console.error(`\n${name} failed.`);
    process.exit(status);
  }
}
