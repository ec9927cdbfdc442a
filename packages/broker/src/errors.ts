/** Publishing found no connection, or the broker did not confirm: try again later. */
export class BrokerUnavailableError extends Error {
  constructor(message = "broker is not connected") {
    super(message);
  }
}

/** Socket errors that say the other side is away for now, not that the work is wrong. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/**
 * Whether an error is the broker's or the network's, and so worth the same work again: the error
 * or one it wraps (`cause`: a publish of several failed because the broker went away).
 */
export function isTransientBrokerError(err: unknown): boolean {
  for (
    let e = err, depth = 0;
    e && typeof e === "object" && depth < 8;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (e instanceof BrokerUnavailableError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/** Where a consumer reports a handler's failure that an outage explains, instead of a warning a retry. */
export type HandlerOutage = { is: (err: unknown) => boolean; failed: (err: unknown) => void };

/**
 * The broker's own outage while it is not connected (a publish found no connection), else the
 * dependency's given (`dependency`: the database's), else none.
 */
export function outageOfHandlers(
  connected: () => boolean,
  own: Pick<HandlerOutage, "failed">,
  dependency?: HandlerOutage,
): HandlerOutage {
  return {
    is: (err) => (!connected() && isTransientBrokerError(err)) || (dependency?.is(err) ?? false),
    failed: (err) => (dependency?.is(err) ? dependency.failed(err) : own.failed(err)),
  };
}
