import { covers } from "@herald/contracts/scopes";
import type { Account } from "../context.ts";
import { ApiError } from "./errors.ts";
import type { RouteSpec } from "./route.ts";
import { checkSessionAllows } from "./session.ts";

/** What holds a credential's scopes, in words for an error. */
const holder = (account: Account) =>
  account.via === "dashboard" ? "This dashboard session" : "This API key";

/** A 403 naming the scope an operation needs, and the scopes the caller holds. */
export function insufficientScope(account: Account, needed: string, what = "this operation"): ApiError {
  const held = account.scopes?.length ? account.scopes.join(", ") : "none";
  return new ApiError(
    403,
    "invalid_request_error",
    "insufficient_scope",
    `${holder(account)} lacks the scope '${needed}' ${what} needs (it holds: ${held}).`,
    undefined,
    [{ scope: needed }],
  );
}

/**
 * Whether the caller may use the route at all, before anything of the request is read: a
 * portal session the routes the portal shows, a key or a dashboard session the routes its
 * scopes cover, and a key confined to one app only the routes that keep to one app.
 */
export function checkAccess(account: Account, route: RouteSpec): void {
  checkSessionAllows(account, route);
  if (route.auth !== "account" || account.via === "portal") return;
  if (!covers(account.scopes ?? [], route.scope)) throw insufficientScope(account, route.scope);
  if (account.appId && !route.portal && !route.oneApp)
    throw new ApiError(
      403,
      "invalid_request_error",
      "app_confined",
      `This API key is confined to the app '${account.appId}'; ${route.method.toUpperCase()} ${route.path} spans the account.`,
    );
}
