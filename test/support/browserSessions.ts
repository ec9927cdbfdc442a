import { expect } from "vitest";
import type { TestGateway } from "./gateway.ts";

export type Page = "portal" | "dashboard";

/**
 * A browser's session steps against a test gateway, as the portal and the dashboard take them:
 * opening a link for its cookie, calling with it, and making an app's portal link. `gw` is read
 * when called, so the gateway may start in a `beforeAll`.
 */
export function browserSessions(gw: () => TestGateway) {
  /** Opens a link the way the page does, and returns the cookie it got. */
  async function open(token: string, page: Page = "portal"): Promise<string> {
    const res = await gw().request("POST", "/session", {
      key: null,
      headers: { "herald-page": page },
      json: { token },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.headers.get("set-cookie")!.split(";")[0]!;
  }

  /** A request as the page makes it: its cookie and its name. */
  const as = (cookie: string, page: Page = "portal") => ({
    key: null,
    headers: { cookie, "herald-page": page },
  });

  /** A portal link of `app`, made with the account's key. */
  async function portal(body: Record<string, unknown> = {}, app = "acme") {
    const res = await gw().request("POST", `/v3/apps/${app}/portal-sessions`, { json: body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as {
      id: string;
      url: string;
      token: string;
      expires_at: string;
      read_only: boolean;
      app: string;
    };
  }

  return { open, as, portal };
}
