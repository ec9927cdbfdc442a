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

/** Whether an error is the broker's or the network's, and so worth the same work again. */
export function isTransientBrokerError(err: unknown): boolean {
  if (err instanceof BrokerUnavailableError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && NETWORK_CODES.has(code);
}
