import { randomUUID } from "node:crypto";
import {
  type ApiErrorBody,
  apiError,
  HeraldAbortError,
  type HeraldApiError,
  HeraldConnectionError,
  HeraldError,
  HeraldTimeoutError,
} from "./errors.ts";
import { type OperationId, type Operations, operations } from "./generated/openapi.ts";
import { type Config, type HeraldOptions, type RequestOptions, resolveOptions } from "./options.ts";
import { PageIterator } from "./paging.ts";
import { backoffMs, retryDelayForResponse } from "./retry.ts";
import { VERSION } from "./version.ts";

/**
 * The transport under every method: one operation of the API, by its operationId, as one HTTP
 * call with retries. Each POST carries an Idempotency-Key (the caller's, or a random UUID) that
 * stays the same on every retry of that call.
 */

/** What an answer said besides its body: `responseOf(result)`. */
export type ResponseInfo = {
  status: number;
  headers: Headers;
  /** The response's `Request-Id` (or `X-Request-Id`) header; null when the server sent none. */
  requestId: string | null;
  /** The Idempotency-Key sent (POST only). */
  idempotencyKey: string | null;
  /** True when the API answered from its idempotency record: the work was done by an earlier request. */
  replayed: boolean;
  /** Attempts made, 1 when the first one answered. */
  attempts: number;
};

export type Params<K extends OperationId> = Operations[K]["params"];
export type Query<K extends OperationId> = Operations[K]["query"];
export type Body<K extends OperationId> = Operations[K]["body"];
export type Result<K extends OperationId> = Operations[K]["response"];
export type Item<K extends OperationId> = Result<K> extends { data: Array<infer T> } ? T : never;

type Parts = { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
type Answer = { response: Response; text: string } | { error: HeraldConnectionError };

const responses = new WeakMap<object, ResponseInfo>();

/** The status, headers and request id of the response a result came from. */
export function responseOf(result: object): ResponseInfo | undefined {
  return responses.get(result);
}

function requestIdOf(headers: Headers): string | null {
  return headers.get("request-id") ?? headers.get("x-request-id");
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done, fail) => {
    if (signal?.aborted) return fail(aborted(signal));
    const onAbort = () => {
      clearTimeout(timer);
      fail(aborted(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      done();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const aborted = (signal: AbortSignal) =>
  new HeraldAbortError("The call was aborted.", { cause: signal.reason });

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const detail = cause?.code ?? cause?.message;
  return `${(err as Error).message ?? String(err)}${detail ? ` (${detail})` : ""}`;
}

export class Transport {
  private readonly config: Config;

  constructor(options: HeraldOptions = {}) {
    this.config = resolveOptions(options);
  }

  get baseUrl(): string {
    return this.config.baseUrl;
  }

  /** One operation; resolves with its parsed success body, or rejects with a HeraldError. */
  async call<K extends OperationId>(
    id: K,
    parts: { params?: Params<K>; query?: Query<K>; body?: Body<K> },
    options: RequestOptions = {},
  ): Promise<Result<K>> {
    const { method, path } = operations[id];
    const { params, query, body } = parts as Parts;
    const url = this.url(id, path, params, query);
    const headers = new Headers({
      accept: "application/json",
      authorization: `Bearer ${this.config.apiKey}`,
      "user-agent": `herald-sdk-typescript/${VERSION}`,
    });
    for (const [k, v] of Object.entries({ ...this.config.headers, ...options.headers })) headers.set(k, v);
    let idempotencyKey: string | null = null;
    if (method === "POST") {
      idempotencyKey = options.idempotencyKey ?? headers.get("idempotency-key") ?? randomUUID();
      headers.set("idempotency-key", idempotencyKey);
      headers.set("content-type", "application/json");
    }
    const init: RequestInit = {
      method,
      headers,
      body: method === "POST" ? JSON.stringify(body ?? {}) : null,
    };
    const timeoutMs = options.timeoutMs ?? this.config.timeoutMs;
    const maxRetries = options.maxRetries ?? this.config.maxRetries;
    const where = `${method} ${path}`;
    for (let attempt = 1; ; attempt++) {
      const answer = await this.attempt(url, init, timeoutMs, options.signal, where, idempotencyKey);
      if ("response" in answer && answer.response.ok)
        return this.success(answer, where, { idempotencyKey, attempts: attempt }) as Result<K>;
      const retry = attempt - 1;
      let delay: number | null;
      let error: HeraldError;
      if ("error" in answer) {
        error = answer.error;
        delay = backoffMs(retry);
      } else {
        error = this.failure(answer, where, idempotencyKey);
        const { status, headers: got } = answer.response;
        delay = retryDelayForResponse(status, got.get("retry-after"), retry);
      }
      if (delay === null || retry >= maxRetries) throw error;
      await sleep(delay, options.signal);
    }
  }

  /** A list operation as a PageIterator over its items. */
  list<K extends OperationId>(
    id: K,
    params: Params<K> | undefined,
    query: Query<K>,
    options: RequestOptions = {},
    cursorOf: (item: Item<K>) => string = (item) => (item as { id: string }).id,
  ): PageIterator<Item<K>, Query<K> & object> {
    return new PageIterator(
      (q) => this.call(id, { params, query: q } as never, options) as never,
      query as Query<K> & object,
      cursorOf,
    );
  }

  private url(id: string, path: string, params: Parts["params"], query: Parts["query"]): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = params?.[name];
      // An empty segment would name another route (GET /v3/apps/ is the list).
      if (typeof value !== "string" || value === "")
        throw new HeraldError(`${id}: the path parameter "${name}" must be a non-empty string.`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      search.append(name, value instanceof Date ? value.toISOString() : String(value));
    }
    const qs = search.toString();
    return `${this.config.baseUrl}${filled}${qs ? `?${qs}` : ""}`;
  }

  /** One HTTP exchange. No answer is a value (to retry); the caller's abort is thrown. */
  private async attempt(
    url: string,
    init: RequestInit,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    where: string,
    idempotencyKey: string | null,
  ): Promise<Answer> {
    if (signal?.aborted) throw aborted(signal);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    // Also settles a fetch of the caller's that ignores the signal.
    const stopped = new Promise<never>((_, fail) =>
      controller.signal.addEventListener("abort", () => fail(new Error("aborted")), { once: true }),
    );
    stopped.catch(() => {});
    try {
      const response = await Promise.race([
        this.config.fetch(url, { ...init, signal: controller.signal }),
        stopped,
      ]);
      const text = await Promise.race([response.text(), stopped]);
      return { response, text };
    } catch (cause) {
      if (signal?.aborted) throw aborted(signal);
      if (timedOut)
        return {
          error: new HeraldTimeoutError(`No response within ${timeoutMs} ms: ${where}.`, idempotencyKey, {
            cause,
          }),
        };
      const message = `Could not reach Herald at ${this.config.baseUrl}: ${describe(cause)}.`;
      return { error: new HeraldConnectionError(message, idempotencyKey, { cause }) };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  private success(
    answer: { response: Response; text: string },
    where: string,
    meta: { idempotencyKey: string | null; attempts: number },
  ): unknown {
    const { response, text } = answer;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw this.failure(answer, where, meta.idempotencyKey);
    }
    if (body && typeof body === "object")
      responses.set(body, {
        status: response.status,
        headers: response.headers,
        requestId: requestIdOf(response.headers),
        replayed: response.headers.get("idempotent-replayed") === "true",
        ...meta,
      });
    return body;
  }

  /** The typed error for a response that is not a success (or a success that is not JSON). */
  private failure(
    answer: { response: Response; text: string },
    where: string,
    idempotencyKey: string | null,
  ): HeraldApiError {
    const { response, text } = answer;
    let error: ApiErrorBody | undefined;
    try {
      const parsed = JSON.parse(text)?.error;
      if (typeof parsed?.code === "string" && typeof parsed?.message === "string") error = parsed;
    } catch {}
    error ??= {
      type: response.status >= 500 || response.ok ? "api_error" : "invalid_request_error",
      code: "unexpected_response",
      message: `${where} answered ${response.status} with ${text ? `"${text.slice(0, 200)}"` : "no body"}, not the API's JSON.`,
    };
    const init = { status: response.status, error, headers: response.headers, idempotencyKey };
    return apiError({ ...init, requestId: requestIdOf(response.headers) });
  }
}
