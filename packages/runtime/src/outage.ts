import type { Logger } from "./logger.ts";

/**
 * A dependency's outages (the database, the broker) as a service's log tells them: one line
 * when the first failure comes, one when it answers again with how long it was away and how
 * many failures that cost, and nothing per retry in between. Every retry loop of the process
 * reports to the same log, so an outage is one pair of lines however many loops noticed it.
 */
export class OutageLog {
  private since: number | null = null;
  private failures = 0;

  constructor(
    protected readonly logger: Logger,
    readonly dependency: string,
    private readonly now: () => number = Date.now,
  ) {}

  get down(): boolean {
    return this.since !== null;
  }

  /** A failure that the dependency's absence explains. Logged only if it starts an outage. */
  failed(err: unknown): void {
    this.failures++;
    if (this.since !== null) return;
    this.since = this.now();
    this.logger.error(
      { dependency: this.dependency, err: describe(err) },
      `${this.dependency} unavailable; retrying until it answers`,
    );
  }

  /** The dependency answered. Ends an outage, if one was under way. */
  ok(): void {
    if (this.since === null) return;
    const downMs = this.now() - this.since;
    const failures = this.failures;
    this.since = null;
    this.failures = 0;
    this.logger.warn({ dependency: this.dependency, downMs, failures }, `${this.dependency} available again`);
  }
}

/**
 * An error as one line: Prisma's messages carry a code frame over several lines, the cause on
 * the last; an AggregateError (a connection refused on each of a host's addresses) has none of
 * its own.
 */
export function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const lines = err.message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length) return lines.at(-1)!;
  const inner = (err as { errors?: unknown[] }).errors?.[0];
  if (inner) return describe(inner);
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? code : err.name;
}
