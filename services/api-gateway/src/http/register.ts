import type { Express, NextFunction, Request, Response } from "express";
import { actorOf, recordAudit, sourceOf } from "../audit/record.ts";
import type { Account, Ctx, Deps, Reply } from "../context.ts";
import { checkAccess } from "./access.ts";
import { authenticateKey, checkAdminToken } from "./auth.ts";
import { parseBody, parseFormJson } from "./body.ts";
import { ApiError, unauthenticated } from "./errors.ts";
import { requestHash, withIdempotency } from "./idempotency.ts";
import type { Limiters } from "./rateLimit.ts";
import { expressPath, type RouteSpec, type Schema } from "./route.ts";
import {
  authenticateSession,
  checkSameSite,
  cookieName,
  cookieValue,
  PAGE_HEADER,
  pageOf,
  secureCookies,
} from "./session.ts";
import { checkStorable } from "./storable.ts";
import { largeBody, Turns } from "./turns.ts";
import { validate } from "./validate.ts";

const noFields: Schema = { type: "object", additionalProperties: false, properties: {} };
const bodyParser = parseBody();

function readBody(req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) =>
    bodyParser(req, res, (err?: unknown) => (err ? reject(err) : resolve())),
  );
}

/** In a form, an array field sent empty (`event_types=`) means the empty array. */
function emptyFormArrays(body: Record<string, unknown>, schema: Schema): void {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  for (const [name, prop] of Object.entries(properties)) {
    const value = body[name];
    if (
      prop.type === "array" &&
      (value === "" || (Array.isArray(value) && value.length === 1 && value[0] === ""))
    )
      body[name] = [];
  }
}

async function authenticate(
  route: RouteSpec,
  req: Request,
  deps: Deps,
  limiters: Limiters,
): Promise<Account> {
  if (route.auth === "account") {
    const cookie = req.headers.authorization
      ? undefined
      : cookieValue(req.headers.cookie, cookieName(secureCookies(deps.config)));
    if (cookie && route.method !== "get") checkSameSite(req, deps.config.publicUrl);
    const account = cookie
      ? await authenticateSession(deps.prisma, cookie, pageOf(req.headers[PAGE_HEADER]))
      : await authenticateKey(deps.prisma, req.headers.authorization, deps.caches.keys);
    checkAccess(account, route);
    // A customer's portal draws from a bucket of its own: one portal, or a script holding its
    // cookie, cannot spend the account's requests (and the account's backend cannot starve it).
    if (account.via === "portal" && account.session) limiters.portal.take(account.session.id);
    else limiters.account.take(account.id);
    return account;
  }
  if (route.auth === "admin") {
    if (!deps.config.adminToken)
      throw unauthenticated("Operator routes are off: set ADMIN_TOKEN to use them.");
    checkAdminToken(deps.config.adminToken, req.headers.authorization);
  }
  return { id: "", keyId: "", via: "key" };
}

/** Registers every route of the table: auth, rate limit, body, validation, idempotency, handler. */
export function registerRoutes(app: Express, routes: RouteSpec[], deps: Deps, limiters: Limiters): void {
  // An account's large requests, in turns (turns.ts); the rest never wait for a turn.
  const turns = new Turns();
  for (const route of routes) {
    app[route.method](expressPath(route.path), async (req: Request, res: Response) => {
      const account = await authenticate(route, req, deps, limiters);
      const end = largeBody(req.headers) ? await turns.take(account.id) : null;
      try {
        await handle(route, req, res, account, deps);
      } finally {
        end?.();
      }
    });
  }
}

/** A route's request, once authenticated: checked, read, validated, handled and answered. */
async function handle(route: RouteSpec, req: Request, res: Response, account: Account, deps: Deps) {
  checkStorable([req.params, req.query as Record<string, unknown>]);
  const query = validate<Record<string, unknown>>(
    route.query ?? noFields,
    { ...req.query },
    { coerce: true },
  );
  await readBody(req, res);
  const body = req.body as Record<string, unknown>;
  const bodySchema = route.body ?? noFields;
  if (req.isForm) {
    parseFormJson(body, route.formJson ?? []);
    emptyFormArrays(body, bodySchema);
  }
  checkStorable([body], req.isForm ? undefined : req.rawJson);
  validate(bodySchema, body, { coerce: req.isForm === true });
  const audit: Ctx["audit"] = (tx, target, by) => {
    if (!route.audit) throw new Error(`${route.method} ${route.path} records no audit action`);
    return recordAudit(tx, {
      accountId: by?.accountId ?? account.id,
      actor: by?.actor ?? actorOf(account),
      action: route.audit,
      target,
      fields: Object.keys(body),
      source: sourceOf(req),
    });
  };
  const run = (): Promise<Reply> =>
    route.handler({ account, params: req.params as Record<string, string>, query, body, deps, req, audit });
  const key = req.headers["idempotency-key"];
  const reply =
    route.method === "post" && route.auth === "account" && typeof key === "string"
      ? await withIdempotency(
          deps.prisma,
          deps.placeholders,
          deps.secrets,
          // Each credential's keys live apart: a remembered response (a new key's secret, a
          // session's link) is only ever replayed to the caller that made it, never to another
          // key or session of the account, which may hold less.
          `${account.id}/${account.keyId || account.session?.id || ""}`,
          key,
          requestHash(req.method, req.path, body),
          run,
        )
      : await run();
  if ("replayed" in reply && reply.replayed) res.setHeader("Idempotent-Replayed", "true");
  if (reply.headers) res.set(reply.headers);
  res.status(reply.status ?? 200).json(reply.body);
}

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(
    new ApiError(
      404,
      "invalid_request_error",
      "unrecognized_url",
      `Unrecognized request URL (${req.method} ${req.path}).`,
    ),
  );
}
