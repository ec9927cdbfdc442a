// The module, not @herald/runtime's index: that would bring the logger's and telemetry's
// packages (pino, OpenTelemetry) into the migrate image, which needs none of them.
import { parseDuration } from "../../runtime/src/config.ts";
import { ensureDatabase, migrate } from "./migrate.ts";
import { migrationStatus, waitForMigrations } from "./migrationStatus.ts";

/**
 * `pnpm migrate`: create the database if needed and apply pending migrations.
 *
 * Two read-only modes, chosen by a flag or by MIGRATE_MODE (an image's default command can
 * then be kept and only the environment set, as Kubernetes init containers do):
 * - `--check` (MIGRATE_MODE=check): exit 0 when every migration is applied, 2 when some are
 *   pending, 1 when the database cannot be read or an applied migration has changed;
 * - `--wait` (MIGRATE_MODE=wait): wait until every migration is applied, then exit 0; exit 1
 *   after MIGRATE_TIMEOUT (`--timeout=`, default 10m; a duration as every other setting takes
 *   it, e.g. 90s, 1.5m, 2h) or when an applied migration has changed.
 */
const url = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/herald";
const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const mode = flag("check") ? "check" : flag("wait") ? "wait" : (process.env.MIGRATE_MODE ?? "apply");
const rawTimeout = flag("timeout")?.split("=")[1] ?? process.env.MIGRATE_TIMEOUT ?? "10m";

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

if (mode === "apply") {
  if (await ensureDatabase(url)) console.log(`created database ${new URL(url).pathname.slice(1)}`);
  const applied = await migrate(url, (line) => console.log(line));
  console.log(applied.length ? `${applied.length} migration(s) applied` : "database is up to date");
} else if (mode === "check") {
  const status = await migrationStatus(url).catch((err: Error) =>
    fail(`cannot read migrations: ${err.message}`),
  );
  if (status.changed.length)
    fail(`migration(s) changed after they were applied: ${status.changed.join(", ")}`);
  if (status.pending.length) fail(`pending migration(s): ${status.pending.join(", ")}`, 2);
  console.log("database is up to date");
} else if (mode === "wait") {
  const timeoutMs = parseDuration(rawTimeout);
  if (timeoutMs === null) fail(`MIGRATE_TIMEOUT must be a duration such as 90s or 10m, got "${rawTimeout}"`);
  await waitForMigrations(url, { timeoutMs, log: (line) => console.log(line) }).catch((err: Error) =>
    fail(err.message),
  );
  console.log("database is up to date");
} else {
  fail(`MIGRATE_MODE must be apply, check or wait, got "${mode}"`);
}
