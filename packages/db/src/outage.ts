import { type Logger, OutageLog } from "@herald/runtime";
import { isDatabaseUnavailable } from "./errors.ts";

/** How often the database is asked whether it is back, during an outage. */
const PROBE_MS = 1000;

/**
 * A process's database outages: logged once when the first failure comes and once when the
 * database answers again, however many requests, handlers and loops failed meanwhile. It is
 * back when the pool opens a connection (createPool) or, asked each second during an outage,
 * answers a `SELECT 1`: an outage does not stay logged as under way because no new connection
 * was needed. Handed to the pool, the broker's consumers and the loops.
 */
export class DatabaseOutage extends OutageLog {
  private probe: (() => Promise<unknown>) | null = null;
  private probing: NodeJS.Timeout | null = null;

  /** `quiet`: failures another outage explains (the broker's, logged by the broker). */
  constructor(
    logger: Logger,
    private readonly quiet: (err: unknown) => boolean = () => false,
  ) {
    super(logger, "database");
  }

  /** Whether `err` is the database being away (errors.ts), not a statement refused. */
  is(err: unknown): boolean {
    return isDatabaseUnavailable(err);
  }

  /** How to ask the database whether it is back (the pool's `SELECT 1`). */
  watch(probe: () => Promise<unknown>): void {
    this.probe = probe;
  }

  override failed(err: unknown): void {
    super.failed(err);
    if (!this.probe || this.probing) return;
    this.probing = setInterval(() => {
      this.probe?.().then(
        () => this.ok(),
        () => {},
      );
    }, PROBE_MS);
    this.probing.unref();
  }

  override ok(): void {
    super.ok();
    if (this.probing) clearInterval(this.probing);
    this.probing = null;
  }

  /** A pass of a loop that runs again failed: part of an outage, or a warning of its own. */
  passFailed(err: unknown, msg: string, fields: Record<string, unknown> = {}): void {
    if (this.is(err)) this.failed(err);
    else if (!this.quiet(err)) this.logger.warn({ ...fields, err }, msg);
  }
}
