/**
 * How often each kind of view refreshes while it is shown (useResource polls only while the tab
 * is visible). One place, so the pages agree and the load they put on the API is easy to see.
 */
export const POLL_MS = {
  /** One app's events: deliveries move by the second while they run (1 s retries in tests). */
  appEvents: 2000,
  /** One endpoint's or event's attempts, ten a page. */
  attempts: 3000,
  /** Events or attempts across every app: heavier queries, and nobody watches them tick. */
  acrossApps: 5000,
  /** The overview's chart: often enough that it visibly moves while deliveries happen. */
  stats: 5000,
  /** Endpoint health (24 h rates): a few more attempts barely change it. */
  health: 10_000,
} as const;
