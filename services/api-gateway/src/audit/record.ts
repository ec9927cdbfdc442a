import type { IncomingMessage } from "node:http";
import { newId, type Prisma } from "@herald/db";
import type { Request } from "express";
import type { Account } from "../context.ts";

/**
 * One record of the audit log: who changed what, from where. Written with the change, in its
 * transaction, so a change that fails (or rolls back) leaves none. It holds ids, names of fields
 * and addresses, never a value: no secret can reach it.
 */
export type Actor = {
  type: "api_key" | "dashboard_session" | "portal_session" | "person" | "operator";
  id: string;
  /** A signed-in person's email; a key's name is its own to look up. */
  name?: string | null;
};

export type AuditTarget = { type: string; id: string | null };

/** Whose change it is, where the request itself names no account. */
export type AuditBy = { accountId: string; actor: Actor };

/** Where a change came from: its request's id (none for a socket's) and the client's address. */
export type AuditSource = { requestId: string | null; ip: string | null };

export type AuditRecordInput = {
  accountId: string;
  actor: Actor;
  action: string;
  target: AuditTarget;
  fields?: readonly string[];
  source: AuditSource;
};

/** An Express request's source: `req.ip` follows TRUST_PROXY (app.ts). */
export function sourceOf(req: Pick<Request, "ip" | "socket" | "res">): AuditSource {
  const requestId = req.res?.getHeader("Request-Id");
  return {
    requestId: typeof requestId === "string" ? requestId : null,
    ip: req.ip ?? req.socket.remoteAddress ?? null,
  };
}

/**
 * A raw request's client address, as Express's `trust proxy` with `hops` would have it: the
 * address `hops` proxies back along X-Forwarded-For from the connection's own.
 */
export function clientAddress(req: IncomingMessage, hops: number): string | null {
  const forwarded = String(req.headers["x-forwarded-for"] ?? "")
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  const chain = [...forwarded, req.socket.remoteAddress ?? ""];
  return chain[Math.max(0, chain.length - 1 - hops)] || null;
}

export type AuditTx = Pick<Prisma.TransactionClient, "auditRecord">;

/** Who an authenticated request comes from. */
export function actorOf(account: Account): Actor {
  if (account.via === "key") return { type: "api_key", id: account.keyId };
  const id = account.session?.id ?? "";
  if (account.person) return { type: "person", id, name: account.person.email };
  return { type: account.via === "portal" ? "portal_session" : "dashboard_session", id };
}

export async function recordAudit(tx: AuditTx, input: AuditRecordInput): Promise<void> {
  await tx.auditRecord.create({
    data: {
      id: newId("auditRecord"),
      accountId: input.accountId,
      actorType: input.actor.type,
      actorId: input.actor.id,
      actorName: input.actor.name ?? null,
      action: input.action,
      objectType: input.target.type,
      objectId: input.target.id,
      fields: [...(input.fields ?? [])],
      requestId: input.source.requestId,
      sourceIp: input.source.ip,
    },
  });
}
