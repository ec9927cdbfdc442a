import { type AttemptCompletedV1, type AttemptRequestedV1, RECORDED_BODY_MAX_BYTES } from "@herald/contracts";
import { type METHODS, refusal, TransformationError, type TransformPool } from "@herald/transform";

/**
 * An attempt through its endpoint's transformation (@herald/transform): the endpoint's
 * `handler(webhook)` run on the request Herald would make, in a worker thread of the sender's
 * pool, never on its event loop. What comes back is the request to make instead, a
 * cancellation, or why it could not be had (`transformation_error`).
 */
export type Transforms = Pick<TransformPool, "run">;

/** The request the transformation made: what is signed and sent in place of Herald's own. */
export type TransformedRequest = {
  method: (typeof METHODS)[number];
  url: URL;
  /** The headers it returned (the endpoint's custom ones among them, or not), names lower-cased. */
  headers: Record<string, string>;
  body: string;
};

/** What an attempt reports when its transformation leaves no request to make. */
export type NoRequest = Pick<
  AttemptCompletedV1,
  "succeeded" | "response_status" | "response_body" | "error" | "retry_after_ms" | "cancelled"
>;

/** A `transformation_error`: the response body names the cause and, where known, the line. */
export function transformationError(message: string): NoRequest {
  return {
    succeeded: false,
    response_status: null,
    response_body: message,
    error: "transformation_error",
    retry_after_ms: null,
  };
}

/** Cancelled by the transformation: no request made, neither a success nor a failure. */
const CANCELLED: NoRequest = {
  succeeded: false,
  response_status: null,
  response_body: null,
  error: null,
  retry_after_ms: null,
  cancelled: true,
};

/** The longest message a failed transformation records (as a response body is cut). */
const MESSAGE_MAX = 4096;

/**
 * The attempt's transformation run before `signal` (the attempt's deadline: waiting for a
 * worker counts): the request to send, or the outcome when there is none.
 */
export async function transformAttempt(
  transforms: Transforms | undefined,
  request: AttemptRequestedV1,
  custom: Record<string, string>,
  oauth2: boolean,
  at: number,
  signal: AbortSignal,
): Promise<{ request: TransformedRequest } | { outcome: NoRequest }> {
  if (!transforms || !request.transformation)
    return { outcome: transformationError("this sender runs no transformations") };
  const source = request.transformation;
  return runTransformation(transforms, { ...request, transformation: source }, custom, at, signal, oauth2);
}

/**
 * Runs `request.transformation` on the attempt, as `owner` = its endpoint, at the webhook's
 * time `at` (ms: the sandbox's fixed Date), within `signal` (the attempt's deadline: waiting
 * for a worker counts). The URL it sees is the endpoint's as stored: a destination's
 * credentials are never in it (they are sealed apart). What it returns that Herald refuses
 * (@herald/transform's `refusal`: a new method or URL for an endpoint with neither, credentials
 * in a URL, an `oauth2` endpoint's request moved to another origin) is a `transformation_error`.
 * Returns the request to make, or the outcome when there is none; throws what is not the
 * transformation's fault (the pool shut down), for the attempt to be made again elsewhere.
 */
export async function runTransformation(
  transforms: Transforms,
  request: AttemptRequestedV1 & { transformation: string },
  custom: Record<string, string>,
  at: number,
  signal: AbortSignal,
  oauth2: boolean,
): Promise<{ request: TransformedRequest } | { outcome: NoRequest }> {
  // The worker builds the webhook object from it (@herald/transform's webhookInput).
  const attempt = { event_id: request.event_id, url: request.url, headers: custom, payload: request.payload };
  let result: Awaited<ReturnType<Transforms["run"]>>;
  try {
    const owner = { account: request.account_id ?? request.endpoint_id, owner: request.endpoint_id };
    result = await transforms.run(owner, request.transformation, attempt, at, signal);
  } catch (err) {
    if (!(err instanceof TransformationError)) throw err;
    // Herald's own capacity, not the code: it was never run (error kinds: transformation_busy).
    if (err.cause === "busy")
      return { outcome: { ...transformationError(err.message), error: "transformation_busy" } };
    return { outcome: transformationError(messageOf(err)) };
  }
  if (result.cancel) return { outcome: CANCELLED };
  const refused = refusal(request.url, oauth2, result);
  if (refused) return { outcome: transformationError(refused) };
  const url = new URL(result.url);
  return { request: { method: result.method, url, headers: result.headers, body: result.body } };
}

/** The error's message, cut short (keeping the line it names) when a thrown value was long. */
function messageOf(err: TransformationError): string {
  if (err.message.length <= MESSAGE_MAX) return err.message;
  const at = err.line === null ? "" : ` (line ${err.line})`;
  return `${err.message.slice(0, MESSAGE_MAX - at.length - 1)}…${at}`;
}

/**
 * What the attempt records of a transformed request's body: its first RECORDED_BODY_MAX_BYTES
 * bytes, cut before a character, not through one.
 */
export function recordedBody(body: string): string {
  if (body.length * 3 <= RECORDED_BODY_MAX_BYTES) return body;
  const bytes = Buffer.from(body, "utf8");
  if (bytes.length <= RECORDED_BODY_MAX_BYTES) return body;
  let end = RECORDED_BODY_MAX_BYTES;
  // Back to the first byte of the character cut through (UTF-8 continuation bytes are 10xxxxxx).
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString("utf8");
}
