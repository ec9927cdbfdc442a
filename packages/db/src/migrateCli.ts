// The config module alone, not @herald/runtime's index: that would bring the logger's and
// telemetry's packages (pino, OpenTelemetry) into the migrate image, which needs none of them.
import { ConfigError, ConfigReader } from "@herald/runtime/config";
import { ensureDatabase, migrate } from "./migrate.ts";
import { migrationStatus, waitForMigrations } from "./migrationStatus.ts";

/**
 * `npm run migrate`: create the database if needed and apply pending migrations.
 *
 * Two read-only modes, chosen by a flag or by MIGRATE_MODE (an image's default command can
 * then be kept and only the environment set, as Kubernetes init containers do):
 * - `--check` (MIGRATE_MODE=check): exit 0 when every migration is applied, 2 when some are
 *   pending, 1 when the database cannot be read or an applied migration has changed;
 * - `--wait` (MIGRATE_MODE=wait): wait until every migration is applied, then exit 0; exit 1
 *   after MIGRATE_TIMEOUT (`--timeout=`, default 10m; a duration as every other setting takes
 *   it, e.g. 90s, 1.5m, 2h) or when an applied migration has changed.
 */
function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const timeoutFlag = flag("timeout")?.split("=")[1];
const r = new ConfigReader({
  ...process.env,
  ...(timeoutFlag !== undefined ? { MIGRATE_TIMEOUT: timeoutFlag } : {}),
});
const url = r.database().databaseUrl;
const mode = flag("check") ? "check" : flag("wait") ? "wait" : r.string("MIGRATE_MODE", "apply");
const timeoutMs = r.duration("MIGRATE_TIMEOUT", 600_000);
r.check(
  ["apply", "check", "wait"].includes(mode),
  `MIGRATE_MODE must be apply, check or wait, got "${mode}"`,
);
try {
  r.done();
} catch (err) {
  fail(err instanceof ConfigError ? err.message : String(err));
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
} else {
  await waitForMigrations(url, { timeoutMs, log: (line) => console.log(line) }).catch((err: Error) =>
    fail(err.message),
  );
  console.log("database is up to date");
}
