/**
 * The API's one error type. Every expected failure becomes an ApiError with a stable `type`,
 * `code`, and the offending `param`; anything else is answered with an opaque 500.
 */
export type ErrorType = "invalid_request_error" | "authentication_error" | "rate_limit_error" | "api_error";

export type ErrorBody = {
  error: { type: ErrorType; code: string; message: string; param?: string; details?: unknown[] };
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly details?: unknown[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    const error: ErrorBody["error"] = { type: this.type, code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export const invalid = (param: string | undefined, message: string, code = "parameter_invalid") =>
  new ApiError(400, "invalid_request_error", code, message, param);

export const missing = (param: string) =>
  new ApiError(
    400,
    "invalid_request_error",
    "parameter_missing",
    `Missing required parameter: ${param}.`,
    param,
  );

export const notFound = (kind: string, id: string, param = "id") =>
  new ApiError(404, "invalid_request_error", "resource_missing", `No such ${kind}: '${id}'.`, param);

export const conflict = (code: string, message: string, param?: string) =>
  new ApiError(409, "invalid_request_error", code, message, param);

export const unauthenticated = (message: string) =>
  new ApiError(401, "authentication_error", "unauthenticated", message);

export const internal = () =>
  new ApiError(
    500,
    "api_error",
    "internal_error",
    "Something went wrong on our side. Please try again later.",
  );

/** How long a client is asked to wait when the database is away: outages seen last seconds. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/**
 * The database is away (down, restarting, unreachable): the request may not have been done,
 * and the same request later will be. A POST retried with its Idempotency-Key is done once.
 */
export const unavailable = () =>
  new ApiError(
    503,
    "api_error",
    "service_unavailable",
    `Herald cannot reach its database right now, so the request may not have been completed. Retry it after the time in Retry-After (with the same Idempotency-Key for a POST).`,
    undefined,
    undefined,
    { "Retry-After": String(UNAVAILABLE_RETRY_AFTER_S) },
  );

/**
 * Express fails to decode a path parameter that is not valid percent-encoding (`/v3/apps/%E0`)
 * with a URIError; that is the caller's mistake, a 400, not ours.
 */
export function malformedPathError(err: unknown): ApiError | null {
  if (!(err instanceof URIError)) return null;
  return new ApiError(
    400,
    "invalid_request_error",
    "invalid_path",
    "The request path is not valid: a part of it is not properly percent-encoded.",
  );
}

/**
 * A request Node's HTTP parser refuses before Express sees it: a URL and headers over its 16
 * KiB, or bytes that are not HTTP. Node would answer a bare status line; the API's error format
 * says what was wrong. (`socket` is the connection: written to directly, then closed.)
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: import("node:stream").Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
  const [status, reason] = tooLarge ? [431, "Request Header Fields Too Large"] : [400, "Bad Request"];
  const error = new ApiError(
    status,
    "invalid_request_error",
    tooLarge ? "request_too_large" : "malformed_request",
    tooLarge
      ? "The request's URL and headers are over 16 KiB together; send long values in the body."
      : "The request is not valid HTTP/1.1.",
  );
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
