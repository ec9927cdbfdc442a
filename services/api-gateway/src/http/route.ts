import type { RouteScope } from "@herald/contracts/scopes";
import type { Ctx, Reply } from "../context.ts";
import type { Tag } from "../openapi/tags.ts";

/**
 * One declarative route. The table of these (routes.ts) is registered on Express and turned
 * into the OpenAPI document, so the reference cannot miss a route the gateway serves.
 */
export type Auth = "account" | "admin" | "none";

export type Schema = Record<string, unknown>;

/**
 * Who may call a route. An account's route names the scope a key or a dashboard session must
 * hold (`@herald/contracts/scopes`): the type has no account route without one.
 */
type Access = { auth: "account"; scope: RouteScope } | { auth: Exclude<Auth, "account">; scope?: undefined };

export type RouteSpec = Access & {
  method: "get" | "post" | "delete";
  /** OpenAPI form: `/v3/apps/{app}`. */
  path: string;
  /**
   * What a portal session (one app, in a browser) may do here: `read` for GET only, `write`
   * for this route whatever its method, and only with a session that may write (a GET that
   * reveals a secret is `write`). Absent: portal sessions get a 403.
   */
  portal?: "read" | "write";
  /**
   * Only an API key may call this: it makes or revokes credentials. A dashboard session (a
   * link valid for a limited time) gets a 403, so it cannot outlive itself; a portal session
   * always does.
   */
  apiKeyOnly?: true;
  /**
   * A key confined to one app may call this: the handler keeps to `account.appId`, as every
   * route with `portal` does. Any other route spans the account and is a 403 to such a key.
   */
  oneApp?: true;
  /**
   * What a successful call records in the audit log (`app.created`): the handler calls
   * `ctx.audit` in the transaction of its change. Every route that changes something names one;
   * `false` for a POST or DELETE that changes nothing an audit follows (a dry run, a test run;
   * sending events, which are their own record).
   */
  audit?: string | false;
  tag: Tag;
  summary: string;
  description?: string;
  /** Path parameters, each a string, with their descriptions. */
  params?: Record<string, string>;
  /** Request headers the route reads (other than authentication), each a string, with their descriptions. */
  headers?: Record<string, string>;
  /** An object schema of the query string (values coerced from strings). */
  query?: Schema;
  /** An object schema of the body. */
  body?: Schema;
  /** Body fields whose value is JSON; a form body carries them as JSON strings. */
  formJson?: readonly string[];
  response: { status: number; schema: Schema; description: string };
  // biome-ignore lint/suspicious/noExplicitAny: each route narrows its own context
  handler: (ctx: Ctx<any, any, any>) => Promise<Reply>;
};

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export const listOf = (name: string): Schema => ({
  type: "object",
  required: ["object", "data", "has_more"],
  properties: {
    object: { const: "list" },
    data: { type: "array", items: ref(name) },
    has_more: { type: "boolean", description: "Whether another page follows in this direction." },
  },
});

export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1");
}
