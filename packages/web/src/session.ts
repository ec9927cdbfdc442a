import type { Session } from "@herald/sdk/types";
import { ApiError, api } from "./api.ts";

/**
 * A session link carries its token in the URL fragment (`#token=…`), which browsers never
 * send to a server. The page takes it out of the address bar before anything else runs, then
 * exchanges it once for an HttpOnly cookie. Later loads find the session through the cookie.
 */
export function takeTokenFromUrl(): string | null {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) history.replaceState(history.state, "", location.pathname + location.search);
  return token;
}

/** The session, or null with why (a link that did not open) or without (no link, no cookie). */
export type Opened = { session: Session | null; problem?: string };

export async function openSession(): Promise<Opened> {
  const token = takeTokenFromUrl();
  try {
    if (token) return { session: await api.post<Session>("/session", { token }) };
    // 204 (no body, so null) when this browser has no session cookie.
    return { session: await api.get<Session | null>("/session") };
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return { session: null, problem: err.message };
    throw err;
  }
}

export async function endSession(): Promise<void> {
  await api.del("/session").catch(() => undefined);
}
