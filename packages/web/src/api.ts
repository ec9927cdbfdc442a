/**
 * The pages' only way to the server: the public /v3 API, same origin. A portal or dashboard
 * session rides in its HttpOnly cookie; a dashboard signed in with an API key sends it as a
 * bearer token, kept in sessionStorage (this browser tab's session only). Every call says
 * which page makes it (`Herald-Page`), so a session of the other kind in the shared cookie is
 * refused rather than used. Only the dashboard sends the key: the portal never reads it.
 */

export type ApiErrorBody = {
  type: string;
  code?: string;
  message: string;
  param?: string;
  details?: { path: string; message: string }[];
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
  get param(): string | undefined {
    return this.body.param;
  }
}

export type List<T> = { object: "list"; data: T[]; has_more: boolean };
export type Query = Record<string, string | number | boolean | undefined | null>;

const KEY_STORAGE = "herald.apiKey";

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_STORAGE),
  set: (key: string) => sessionStorage.setItem(KEY_STORAGE, key),
  clear: () => sessionStorage.removeItem(KEY_STORAGE),
};

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export type Page = "portal" | "dashboard";

let config: { page: Page | null; useApiKey: boolean } = { page: null, useApiKey: false };

/** Once, as the page mounts: which page this is, and whether it signs in with an API key. */
export function configureApi(options: { page: Page; useApiKey?: boolean }): void {
  config = { page: options.page, useApiKey: options.useApiKey === true };
}

/** Called when the server says the session or key is no longer valid (401). */
let onUnauthenticated: (error: ApiError) => void = () => {};
export function whenUnauthenticated(handler: (error: ApiError) => void): void {
  onUnauthenticated = handler;
}

export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (config.page) headers["herald-page"] = config.page;
  const key = config.useApiKey ? apiKey.get() : null;
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
      cache: "no-store",
      signal,
    });
  } catch {
    throw new ApiError(0, {
      type: "network_error",
      message: "Herald could not be reached. Check your connection; this page retries on its own.",
    });
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const error = (parsed as { error?: ApiErrorBody } | null)?.error ?? {
      type: "api_error",
      message: `The server answered ${res.status}.`,
    };
    const apiError = new ApiError(res.status, error);
    if (res.status === 401) onUnauthenticated(apiError);
    throw apiError;
  }
  return parsed as T;
}

export const api = {
  /** `signal` cancels a read nobody waits for any more (a poll overtaken by new filters). */
  get: <T>(path: string, query?: Query, signal?: AbortSignal) =>
    request<T>("GET", withQuery(path, query), undefined, signal),
  post: <T>(path: string, body: unknown = {}) => request<T>("POST", path, body),
  del: <T>(path: string) => request<T>("DELETE", path),
};
