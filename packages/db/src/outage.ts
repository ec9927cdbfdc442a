import { type Logger, OutageLog } from "@herald/runtime";
import { isDatabaseUnavailable } from "./errors.ts";

/**
 * A process's database outages: logged once when the first failure comes and once when a
 * connection opens again (the pool says so: createPool), however many requests, handlers and
 * loops failed meanwhile. Handed to the pool, the broker's consumers and the loops.
 */
export class DatabaseOutage extends OutageLog {
  constructor(logger: Logger) {
    super(logger, "database");
  }

  /** Whether `err` is the database being away (errors.ts), not a statement refused. */
  is(err: unknown): boolean {
    return isDatabaseUnavailable(err);
  }

  /** A pass of a loop that runs again failed: part of an outage, or a warning of its own. */
  passFailed(err: unknown, msg: string, fields: Record<string, unknown> = {}): void {
    if (this.is(err)) this.failed(err);
    else this.logger.warn({ ...fields, err: err instanceof Error ? err.message : String(err) }, msg);
  }
}
