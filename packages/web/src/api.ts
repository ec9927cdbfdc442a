/**
 * The pages' only way to the server: the public /v3 API, same origin. A portal or dashboard
 * session rides in its HttpOnly cookie; a dashboard signed in with an API key sends it as a
 * bearer token, kept in sessionStorage (this browser tab's session only).
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

/** Called when the server says the session or key is no longer valid (401). */
let onUnauthenticated: (error: ApiError) => void = () => {};
export function whenUnauthenticated(handler: (error: ApiError) => void): void {
  onUnauthenticated = handler;
}

export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const key = apiKey.get();
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
  get: <T>(path: string, query?: Query) => request<T>("GET", withQuery(path, query)),
  post: <T>(path: string, body: unknown = {}) => request<T>("POST", path, body),
  del: <T>(path: string) => request<T>("DELETE", path),
};
