import { endpointSecretContext } from "@herald/db";
import type { Ctx, Deps } from "../../context.ts";
import { type RouteSpec, ref, type Schema } from "../../http/route.ts";
import { iso, nullableTimestamp } from "../common.ts";
import { findEndpoint } from "./crud.ts";
import { checkNotListening, checkSecret, generateSecret } from "./input.ts";

/**
 * An endpoint's signing secret: sealed at rest (secrets.ts), shown on request to who may write
 * (a read-only portal link may not: its holder could sign webhooks), and rotated with the old
 * one signing beside the new for a while.
 */
/** During a rotation the previous secret keeps signing beside the new one for 24 hours. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export const endpointSecretSchemas: Record<string, Schema> = {
  EndpointSecret: {
    type: "object",
    required: ["object", "secret"],
    properties: {
      object: { const: "endpoint_secret" },
      secret: { type: "string", examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"] },
      previous_secret_expires_at: {
        ...nullableTimestamp,
        description: "Until then the previous secret signs too.",
      },
    },
  },
};

function secretReply(deps: Deps, e: { id: string; secret: string; previousSecretExpiresAt: Date | null }) {
  const live =
    e.previousSecretExpiresAt && e.previousSecretExpiresAt > new Date() ? e.previousSecretExpiresAt : null;
  return {
    body: {
      object: "endpoint_secret",
      secret: deps.secrets.open(e.secret, endpointSecretContext(e.id)),
      previous_secret_expires_at: iso(live),
    },
  };
}

const byId = { id: "The endpoint's id." };

export const endpointSecretRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/endpoints/{id}/secret",
    auth: "account",
    scope: "endpoints:write",
    // A read-only portal link may see everything but this: the secret lets its holder sign.
    portal: "write",
    tag: "Endpoints",
    summary: "Retrieve an endpoint's signing secret",
    description:
      "A read-only portal session cannot: it gets a `403`. Nor can any portal session read a `herald listen` endpoint's: that secret is the developer's (`400 listen_endpoint`).",
    params: byId,
    response: { status: 200, schema: ref("EndpointSecret"), description: "The current secret." },
    async handler({ account, params, deps }: Ctx<{ id: string }>) {
      const found = await findEndpoint(deps.prisma, account, params.id);
      // The CLI signs every session with one secret of the developer's, whatever the app.
      if (account.via === "portal") checkNotListening(found);
      return secretReply(deps, found);
    },
  },
  {
    method: "post",
    path: "/v3/endpoints/{id}/secret/rotate",
    auth: "account",
    scope: "endpoints:write",
    audit: "endpoint.secret_rotated",
    portal: "write",
    tag: "Endpoints",
    summary: "Rotate an endpoint's signing secret",
    description: "Makes a new secret (or sets `secret`). The old one keeps signing beside it for 24 hours.",
    params: byId,
    body: { type: "object", additionalProperties: false, properties: { secret: { type: "string" } } },
    response: { status: 200, schema: ref("EndpointSecret"), description: "The new secret." },
    async handler({ account, params, body, deps, audit }: Ctx<{ id: string }, object, { secret?: string }>) {
      const found = await findEndpoint(deps.prisma, account, params.id);
      checkNotListening(found);
      const secret = body.secret !== undefined ? checkSecret(body.secret) : generateSecret();
      const updated = await deps.prisma.$transaction(async (tx) => {
        await audit(tx, { type: "endpoint", id: found.id });
        return tx.endpoint.update({
          where: { id: found.id },
          data: {
            secret: deps.secrets.seal(secret, endpointSecretContext(found.id)),
            previousSecret: found.secret,
            previousSecretExpiresAt: new Date(Date.now() + ROTATION_OVERLAP_MS),
            updatedAt: new Date(),
          },
        });
      });
      return secretReply(deps, updated);
    },
  },
];
