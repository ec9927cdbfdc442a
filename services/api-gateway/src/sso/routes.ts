import { randomBytes } from "node:crypto";
import { ROLES } from "@herald/contracts/scopes";
import { newId } from "@herald/db";
import type { Express, Request, Response } from "express";
import * as oidc from "openid-client";
import { recordAudit, sourceOf } from "../audit/record.ts";
import type { Deps } from "../context.ts";
import { cookieValue, newSecret, secureCookies, sessionCookie, sessionHash } from "../http/session.ts";
import { roleOf, type SsoConfig } from "./config.ts";

/**
 * Single sign-on to the dashboard: OpenID Connect's authorization code flow with PKCE.
 *
 * `GET /sso/login` sends the browser to the identity provider with a fresh state, nonce and PKCE
 * verifier, which ride back in a cookie sealed under ENCRYPTION_KEY (nothing is stored before
 * sign-in). `GET /sso/callback` takes the code with them, checks the ID token (openid-client),
 * and admits the person when their verified email and groups allow (config.ts): a dashboard
 * session of OIDC_ACCOUNT with the scopes of their role, in the same cookie a sign-in link gives,
 * recorded in the audit log. A refusal goes back to the dashboard, saying why (`#sso_error=`).
 */
const LOGIN_COOKIE = "herald_sso";
const LOGIN_CONTEXT = "sso-login";
const LOGIN_TTL_S = 600;

type Login = { state: string; nonce: string; verifier: string; exp: number };

const loginCookieName = (secure: boolean) => (secure ? `__Host-${LOGIN_COOKIE}` : LOGIN_COOKIE);

/** The provider's configuration, discovered once (and again after a failure). */
function discoverer(sso: SsoConfig): () => Promise<oidc.Configuration> {
  let found: Promise<oidc.Configuration> | null = null;
  return () => {
    found ??= oidc
      .discovery(
        new URL(sso.issuer),
        sso.clientId,
        sso.clientSecret,
        undefined,
        sso.issuer.startsWith("http:") ? { execute: [oidc.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        found = null;
        throw err;
      });
    return found;
  };
}

export function serveSso(app: Express, deps: Deps): void {
  const sso = deps.config.sso;
  app.get("/sso", (_req, res) => {
    res.set("Cache-Control", "no-store").json({ object: "sso", enabled: sso !== null });
  });
  if (!sso) return;
  const configuration = discoverer(sso);
  const secure = secureCookies(deps.config);
  const redirectUri = `${deps.config.publicUrl}/sso/callback`;
  const refuse = (res: Response, message: string) =>
    res
      .set(
        "Set-Cookie",
        `${loginCookieName(secure)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`,
      )
      .redirect(302, `/dashboard#sso_error=${encodeURIComponent(message)}`);

  app.get("/sso/login", async (_req: Request, res: Response) => {
    let config: oidc.Configuration;
    try {
      config = await configuration();
    } catch (err) {
      deps.logger.warn({ err, issuer: sso.issuer }, "sso: the identity provider could not be discovered");
      return refuse(res, "The identity provider cannot be reached right now. Try again in a moment.");
    }
    const login: Login = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      exp: Date.now() + LOGIN_TTL_S * 1000,
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: sso.scopes,
      state: login.state,
      nonce: login.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(login.verifier),
      code_challenge_method: "S256",
    });
    const sealed = deps.secrets.seal(JSON.stringify(login), LOGIN_CONTEXT);
    res
      .set({
        "Set-Cookie": `${loginCookieName(secure)}=${sealed}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${LOGIN_TTL_S}${secure ? "; Secure" : ""}`,
        "Cache-Control": "no-store",
      })
      .redirect(302, url.href);
  });

  app.get("/sso/callback", async (req: Request, res: Response) => {
    const login = openLogin(deps, cookieValue(req.headers.cookie, loginCookieName(secure)));
    if (!login) return refuse(res, "This sign-in took too long or did not start here. Sign in again.");
    const url = new URL(req.originalUrl, deps.config.publicUrl);
    const problem = url.searchParams.get("error");
    if (problem) return refuse(res, `The identity provider refused the sign-in (${problem.slice(0, 100)}).`);
    let claims: Record<string, unknown>;
    try {
      const config = await configuration();
      const tokens = await oidc.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: login.verifier,
        expectedState: login.state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new Error("no ID token");
      claims = { ...idToken };
      // Providers that put only `sub` in the ID token give the rest at userinfo.
      if (claims.email === undefined || claims[sso.groupsClaim] === undefined)
        claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub)), ...claims };
    } catch (err) {
      deps.logger.warn({ err }, "sso: the sign-in could not be completed");
      return refuse(res, "The sign-in could not be completed with the identity provider. Sign in again.");
    }
    const account = await signInAccount(deps, sso);
    if (typeof account === "string") return refuse(res, account);
    const admitted = roleOf(sso, { ...claims, groups: claims[sso.groupsClaim] });
    if ("refused" in admitted) {
      deps.logger.info({ reason: admitted.refused }, "sso: a sign-in was refused");
      // Who tried, as the provider named them: a refused sign-in is worth a look too.
      const email = typeof claims.email === "string" ? claims.email.slice(0, 320) : String(claims.sub ?? "");
      await recordAudit(deps.prisma, {
        accountId: account.id,
        actor: { type: "person", id: email, name: email },
        action: "session.sign_in_refused",
        target: { type: "dashboard_session", id: null },
        source: sourceOf(req),
      });
      return refuse(res, admitted.refused);
    }
    const cookie = newSecret();
    const expiresAt = new Date(Date.now() + sso.sessionTtlMs);
    await deps.prisma.$transaction(async (tx) => {
      const session = await tx.session.create({
        data: {
          id: newId("session"),
          accountId: account.id,
          kind: "dashboard",
          // Opened here, not by a link: its token is one no one holds.
          tokenHash: sessionHash(randomBytes(32).toString("base64url")),
          tokenUsedAt: new Date(),
          cookieHash: sessionHash(cookie),
          expiresAt,
          scopes: [...ROLES[admitted.role]],
          personEmail: admitted.email,
        },
      });
      await recordAudit(tx, {
        accountId: account.id,
        actor: { type: "person", id: session.id, name: admitted.email },
        action: "session.signed_in",
        target: { type: "dashboard_session", id: session.id },
        fields: [admitted.role],
        source: sourceOf(req),
      });
    });
    res
      .set("Cache-Control", "no-store")
      .append("Set-Cookie", sessionCookie(cookie, sso.sessionTtlMs / 1000, secure))
      .append(
        "Set-Cookie",
        `${loginCookieName(secure)}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`,
      )
      .redirect(302, "/dashboard");
  });
}

/** The login this browser started, while it is fresh; null for none, a forged or a stale one. */
function openLogin(deps: Deps, sealed: string | undefined): Login | null {
  if (!sealed) return null;
  try {
    const login = JSON.parse(deps.secrets.open(sealed, LOGIN_CONTEXT)) as Login;
    return login.exp > Date.now() ? login : null;
  } catch {
    return null;
  }
}

/** The account people sign in to: OIDC_ACCOUNT, or the only one; a string says why there is none. */
async function signInAccount(deps: Deps, sso: SsoConfig): Promise<{ id: string } | string> {
  if (sso.accountId) {
    const named = await deps.prisma.account.findUnique({
      where: { id: sso.accountId },
      select: { id: true },
    });
    return named ?? "OIDC_ACCOUNT names no account of this installation: tell its operator.";
  }
  const accounts = await deps.prisma.account.findMany({ select: { id: true }, take: 2 });
  return accounts.length === 1
    ? accounts[0]!
    : "This installation has several accounts: its operator must name one in OIDC_ACCOUNT.";
}
