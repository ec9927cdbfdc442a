import type { Response } from "./gateway.ts";

/** Calls a running gateway's API over HTTP with an API key, as a product backend would. */
export function apiClient(base: string, key: string) {
  return async (method: string, path: string, json?: unknown): Promise<Response> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    return { status: res.status, body, headers: res.headers };
  };
}
