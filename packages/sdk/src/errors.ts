/**
 * Every error the SDK throws is a HeraldError:
 *
 *   HeraldError                      a misuse, e.g. no API key
 *   ├─ HeraldApiError                the API answered with an error (status, type, code, param…)
 *   │  ├─ HeraldInvalidRequestError  400, 413, 415, 422
 *   │  ├─ HeraldAuthenticationError  401
 *   │  ├─ HeraldPermissionError      403
 *   │  ├─ HeraldNotFoundError        404
 *   │  ├─ HeraldConflictError        409 (resource_exists, idempotency_conflict, …)
 *   │  ├─ HeraldRateLimitError       429, with retryAfterSeconds
 *   │  └─ HeraldServerError          5xx
 *   ├─ HeraldConnectionError         no answer: refused, reset, DNS…
 *   │  └─ HeraldTimeoutError         no answer within timeoutMs
 *   ├─ HeraldAbortError              the caller's AbortSignal fired
 *   └─ WebhookVerificationError      (webhooks.ts) a received webhook is not genuine
 */
export class HeraldError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The `error` object of an API error body. */
export type ApiErrorBody = {
  type: string;
  code: string;
  message: string;
  param?: string;
  details?: { path?: string; message?: string; scope?: string }[];
};

export type ApiErrorInit = {
  status: number;
  error: ApiErrorBody;
  headers: Headers;
  requestId: string | null;
  idempotencyKey: string | null;
};

export class HeraldApiError extends HeraldError {
  readonly status: number;
  /** `invalid_request_error`, `authentication_error`, `rate_limit_error` or `api_error`. */
  readonly type: string;
  /** Stable and machine-readable: `parameter_invalid`, `resource_missing`, `idempotency_conflict`… */
  readonly code: string;
  /** The parameter at fault, when there is one. */
  readonly param: string | undefined;
  /** With `schema_validation_failed` and `invalid_schema`: each problem, where it is. */
  readonly details: ApiErrorBody["details"];
  /** The response's `Request-Id` (or `X-Request-Id`) header; null when the server sent none. */
  readonly requestId: string | null;
  /** The Idempotency-Key the request was sent with (POST only): retry with it to stay idempotent. */
  readonly idempotencyKey: string | null;
  readonly headers: Headers;

  constructor(init: ApiErrorInit) {
    super(init.error.message);
    this.status = init.status;
    this.type = init.error.type;
    this.code = init.error.code;
    this.param = init.error.param;
    this.details = init.error.details;
    this.requestId = init.requestId;
    this.idempotencyKey = init.idempotencyKey;
    this.headers = init.headers;
  }
}

export class HeraldInvalidRequestError extends HeraldApiError {}
export class HeraldAuthenticationError extends HeraldApiError {}
/**
 * A 403: the key lacks the operation's scope (`insufficient_scope`; `requiredScope` names it),
 * is confined to one app (`app_confined`), or a browser session may not do this (`forbidden`).
 */
export class HeraldPermissionError extends HeraldApiError {
  /** With `insufficient_scope`: the scope the operation needs. */
  get requiredScope(): string | undefined {
    return this.details?.find((d) => d.scope)?.scope;
  }
}
export class HeraldNotFoundError extends HeraldApiError {}
export class HeraldConflictError extends HeraldApiError {}
export class HeraldServerError extends HeraldApiError {}

export class HeraldRateLimitError extends HeraldApiError {
  /** The `Retry-After` header in seconds, when sent. */
  readonly retryAfterSeconds: number | null;

  constructor(init: ApiErrorInit) {
    super(init);
    const value = Number(init.headers.get("retry-after"));
    this.retryAfterSeconds = init.headers.has("retry-after") && Number.isFinite(value) ? value : null;
  }
}

/** The HeraldApiError subclass for a status. */
export function apiError(init: ApiErrorInit): HeraldApiError {
  const { status } = init;
  if (status === 401) return new HeraldAuthenticationError(init);
  if (status === 403) return new HeraldPermissionError(init);
  if (status === 404) return new HeraldNotFoundError(init);
  if (status === 409) return new HeraldConflictError(init);
  if (status === 429) return new HeraldRateLimitError(init);
  if (status >= 500) return new HeraldServerError(init);
  if (status >= 400) return new HeraldInvalidRequestError(init);
  return new HeraldApiError(init);
}

export class HeraldConnectionError extends HeraldError {
  /** The Idempotency-Key the request was sent with (POST only): retry with it to stay idempotent. */
  readonly idempotencyKey: string | null;

  constructor(message: string, idempotencyKey: string | null, options?: { cause?: unknown }) {
    super(message, options);
    this.idempotencyKey = idempotencyKey;
  }
}

export class HeraldTimeoutError extends HeraldConnectionError {}

export class HeraldAbortError extends HeraldError {}
