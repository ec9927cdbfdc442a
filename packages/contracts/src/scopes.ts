/**
 * What an API key, and a dashboard session, may do. Each operation of the API needs one scope
 * (its `x-herald-scope` in the OpenAPI document); a credential holds a list of them.
 *
 * - `<resource>:write` covers `<resource>:read`: a key that may change endpoints may read them.
 * - `portal` makes and ends portal sessions (links to one app's portal).
 * - `keys` manages credentials: API keys, and the account's dashboard sessions.
 * - `audit_log:read` reads the audit log.
 * - `*` is every scope, now and to come: what keys made before scopes hold.
 */
export const RESOURCE_SCOPES = [
  "events:write",
  "events:read",
  "endpoints:write",
  "endpoints:read",
  "apps:write",
  "apps:read",
  "event_types:write",
  "event_types:read",
  "portal",
  "keys",
  "audit_log:read",
] as const;

export type ResourceScope = (typeof RESOURCE_SCOPES)[number];
export type Scope = ResourceScope | "*";
export const SCOPES: readonly Scope[] = [...RESOURCE_SCOPES, "*"];

/** A route's need: one scope, or `any` for what every credential may do (nothing it lacks). */
export type RouteScope = ResourceScope | "any";

export const isScope = (value: unknown): value is Scope =>
  typeof value === "string" && (SCOPES as readonly string[]).includes(value);

/** Whether `held` lets its holder do what `needed` names. */
export function covers(held: readonly string[], needed: RouteScope | Scope): boolean {
  if (needed === "any" || held.includes("*")) return true;
  if (needed === "*") return false;
  if (held.includes(needed)) return true;
  return needed.endsWith(":read") && held.includes(needed.replace(/:read$/, ":write"));
}

/** The scopes of `wanted` that `held` does not cover: what a holder cannot hand on. */
export const beyond = (held: readonly string[], wanted: readonly Scope[]): Scope[] =>
  wanted.filter((scope) => !covers(held, scope));

/** The dashboard's roles (single sign-on maps a person to one): each a set of scopes. */
export const ROLES = {
  admin: ["*"],
  developer: ["events:write", "endpoints:write", "apps:write", "event_types:write", "portal"],
  viewer: ["events:read", "endpoints:read", "apps:read", "event_types:read"],
} as const satisfies Record<string, readonly Scope[]>;

export type Role = keyof typeof ROLES;
