/**
 * Why an attempt failed: the `error` of `attempt.completed.v1`, of an attempt row and of the
 * API's attempt object. Senders make them (services/sender/src/errorKind.ts, deliver.ts,
 * tokens.ts); the dispatcher decides by them (`countsAgainstEndpoint`, `isUnreachable`); the
 * API reference and the portal show their meanings from here. No I/O here, and a subpath of
 * its own (`@herald/contracts/errorKinds`), so the pages can import it without the schemas.
 *
 * Each meaning is a few words for the people whose endpoint it is; the table of error kinds
 * (docs/delivery.md, "Error kinds") says the same at length.
 */
export const ERROR_KINDS = {
  timeout: "No response in time.",
  connection_error: "The connection was refused, reset or closed before a response.",
  dns_error: "The host name does not resolve.",
  tls_error:
    "The server's certificate was not accepted (expired, self-signed, untrusted or for another name).",
  http_error: "The endpoint answered with a status other than 2xx.",
  blocked_destination: "The host is, or resolves to, a private or reserved address.",
  proxy_error: "The egress proxy failed, not the endpoint: this does not count toward disabling it.",
  auth_error:
    "No OAuth2 token could be had from the token URL, or a destination refused its credentials: the response body says why.",
  invalid_url: "The URL does not parse.",
  rejected:
    "The destination's server refused the message: a broker's nack, a message it could not route, or an object it would not store.",
  transformation_error:
    "The endpoint's transformation threw, ran out of time or memory, or returned something that is not a request: the response body says why, and on which line.",
  transformation_busy:
    "Herald's transformation workers were all busy until the attempt's time ran out, so the transformation was not run: Herald's capacity, not the endpoint's, so this does not count toward disabling it.",
} as const satisfies Record<string, string>;

export type ErrorKind = keyof typeof ERROR_KINDS;

export const isErrorKind = (value: string): value is ErrorKind => Object.hasOwn(ERROR_KINDS, value);

/**
 * The kinds that are the operator's failure, not the endpoint's: the egress proxy failing
 * (services/sender/src/egress.ts), or every transformation worker busy past the attempt's
 * time (@herald/transform). They neither start the endpoint's failure clock nor disable it.
 */
const NOT_THE_ENDPOINTS: ReadonlySet<string> = new Set<ErrorKind>(["proxy_error", "transformation_busy"]);

/** Whether a failed attempt of this kind counts toward disabling its endpoint. */
export const countsAgainstEndpoint = (kind: string | null): boolean =>
  kind === null || !NOT_THE_ENDPOINTS.has(kind);

/**
 * The kinds that say the endpoint could not be reached (no answer at all): a run of them
 * opens the endpoint's breaker (the lifecycle's flow.ts). Not `proxy_error`, the operator's.
 */
const UNREACHABLE: ReadonlySet<string> = new Set<ErrorKind>([
  "timeout",
  "connection_error",
  "dns_error",
  "tls_error",
  // Not unreachable, but as much the endpoint's and as sure to fail again: a transformation
  // that fails each attempt pauses its endpoint as an unreachable one does.
  "transformation_error",
]);

export const isUnreachable = (kind: string | null): boolean => kind !== null && UNREACHABLE.has(kind);

/**
 * The kinds of an attempt that made no request: its endpoint's transformation failed or was
 * never run, so there was nothing to send (services/sender/src/transformation.ts). The API
 * shows such an attempt's `request` as null, as a cancelled one's, not Herald's own POST.
 */
const NO_REQUEST: ReadonlySet<string> = new Set<ErrorKind>(["transformation_error", "transformation_busy"]);

export const madeNoRequest = (kind: string | null): boolean => kind !== null && NO_REQUEST.has(kind);
