import { ROLES, type Role } from "@herald/contracts/scopes";
import type { ConfigReader } from "@herald/runtime";

/**
 * Single sign-on to the dashboard by OpenID Connect, set per installation: OIDC_ISSUER and the
 * client's id and secret, the account people sign in to (OIDC_ACCOUNT, or the installation's only
 * one), and who may: a verified email in one
 * of OIDC_ALLOWED_DOMAINS, or a group (OIDC_GROUPS_CLAIM) that OIDC_ROLES maps to a role. Off
 * unless OIDC_ISSUER is set.
 */
export type SsoConfig = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account people sign in to; null: the installation's only account. */
  accountId: string | null;
  /** Email domains a person must be of (`example.com`); empty: any, if a group admits them. */
  domains: string[];
  /** The ID token's or userinfo's claim that lists a person's groups. */
  groupsClaim: string;
  /** Group → role: the highest role of a person's groups is theirs. */
  roles: Map<string, Role>;
  /** The role of a person of an allowed domain whom no group maps; null (the default): refused. */
  defaultRole: Role | null;
  scopes: string;
  sessionTtlMs: number;
};

const ROLE_NAMES = Object.keys(ROLES) as Role[];
export const isRole = (value: string): value is Role => (ROLE_NAMES as string[]).includes(value);
/** Roles from the most to the least: a person in two groups gets the higher. */
export const ROLE_ORDER: readonly Role[] = ["admin", "developer", "viewer"];

const list = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export function ssoConfig(r: ConfigReader): SsoConfig | null {
  const issuer = r.string("OIDC_ISSUER");
  const clientId = r.string("OIDC_CLIENT_ID");
  const clientSecret = r.string("OIDC_CLIENT_SECRET");
  const accountId = r.string("OIDC_ACCOUNT");
  const domains = list(r.string("OIDC_ALLOWED_DOMAINS")).map((d) => d.toLowerCase().replace(/^@/, ""));
  const roles = new Map<string, Role>();
  for (const pair of list(r.string("OIDC_ROLES"))) {
    const at = pair.lastIndexOf("=");
    const role = pair.slice(at + 1).trim();
    r.check(
      at > 0 && isRole(role),
      `OIDC_ROLES takes group=role pairs, the role one of ${ROLE_NAMES.join(", ")}; got "${pair}"`,
    );
    if (at > 0 && isRole(role)) roles.set(pair.slice(0, at).trim(), role);
  }
  const fallback = r.string("OIDC_DEFAULT_ROLE", "none");
  r.check(
    fallback === "none" || isRole(fallback),
    `OIDC_DEFAULT_ROLE must be none or one of ${ROLE_NAMES.join(", ")}, got "${fallback}"`,
  );
  const sessionTtlMs = r.duration("OIDC_SESSION_TTL", 8 * 3_600_000);
  const scopes = r.string("OIDC_SCOPES", "openid email profile");
  const groupsClaim = r.string("OIDC_GROUPS_CLAIM", "groups");
  if (!issuer) {
    r.check(
      !clientId && !accountId,
      "OIDC_CLIENT_ID and OIDC_ACCOUNT are set without OIDC_ISSUER: set it, or unset them",
    );
    return null;
  }
  r.url("OIDC_ISSUER", issuer, ["https:", "http:"]);
  // Over plain http anyone on the way could hand Herald their own keys and tokens: only a
  // provider on this host (a test's, a local one) may be http.
  r.check(
    !issuer.startsWith("http:") || /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/.test(issuer),
    `OIDC_ISSUER must be https (http only on this host: 127.0.0.1, localhost or [::1]), got "${issuer}"`,
  );
  r.check(
    Boolean(clientId && clientSecret),
    "OIDC_ISSUER is set: set OIDC_CLIENT_ID and OIDC_CLIENT_SECRET too",
  );
  r.check(
    domains.length > 0 || roles.size > 0,
    "OIDC_ISSUER is set: set OIDC_ALLOWED_DOMAINS or OIDC_ROLES, or no one can sign in",
  );
  r.check(sessionTtlMs >= 1000 && sessionTtlMs <= 7 * 86_400_000, "OIDC_SESSION_TTL must be from 1s to 7d");
  r.check(/(^|\s)openid(\s|$)/.test(scopes), "OIDC_SCOPES must include openid");
  return {
    issuer: issuer.replace(/\/+$/, ""),
    clientId: clientId ?? "",
    clientSecret: clientSecret ?? "",
    accountId: accountId ?? null,
    domains,
    groupsClaim,
    roles,
    defaultRole: fallback !== "none" && isRole(fallback) ? fallback : null,
    scopes,
    sessionTtlMs,
  };
}

/** What a person's verified claims make of them: a role, or why not. */
export function roleOf(
  config: SsoConfig,
  person: { email?: unknown; email_verified?: unknown; groups?: unknown },
): { role: Role; email: string } | { refused: string } {
  const email = typeof person.email === "string" ? person.email.toLowerCase() : "";
  if (!email) return { refused: "The identity provider gave no email for this person." };
  if (person.email_verified !== true)
    return { refused: `The identity provider has not verified ${email}: it cannot sign in.` };
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (config.domains.length && !config.domains.includes(domain))
    return { refused: `${email} is not of a domain allowed to sign in to this dashboard.` };
  const groups = Array.isArray(person.groups) ? person.groups.filter((g) => typeof g === "string") : [];
  const mapped = groups.map((g) => config.roles.get(g)).filter((r): r is Role => r !== undefined);
  const role =
    ROLE_ORDER.find((r) => mapped.includes(r)) ?? (config.domains.length ? config.defaultRole : null);
  if (!role) return { refused: `${email} is in no group that may sign in to this dashboard.` };
  return { role, email };
}
