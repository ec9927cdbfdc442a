import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { PrismaClient } from "@herald/db";
import type { Caches } from "../cache.ts";
import type { Account } from "../context.ts";
import { unauthenticated } from "./errors.ts";

/**
 * API keys are `hk_` and 32 random bytes in base64url. Only their SHA-256 is stored: the key
 * is shown once, when it is made. (A slow hash buys nothing for 256 random bits.)
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = `hk_${randomBytes(32).toString("base64url")}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, 10) };
}

/** `hk_` and 20 to 200 of A-Z a-z 0-9 _ -: the keys Herald makes, and BOOTSTRAP_API_KEY. */
export const API_KEY_FORMAT = /^hk_[A-Za-z0-9_-]{20,200}$/;

export function bearerToken(header: string | undefined): string {
  if (!header)
    throw unauthenticated("No API key provided. Send the header 'Authorization: Bearer <API_KEY>'.");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match)
    throw unauthenticated("Malformed Authorization header. Expected 'Authorization: Bearer <API_KEY>'.");
  return match[1]!;
}

export async function authenticateKey(
  prisma: Pick<PrismaClient, "apiKey">,
  header: string | undefined,
  cache: Caches["keys"],
): Promise<Account> {
  const token = bearerToken(header);
  if (!API_KEY_FORMAT.test(token)) throw unauthenticated("Invalid API key.");
  const hash = hashApiKey(token);
  const key = await cache.getOrLoad(hash, async () => {
    const row = await prisma.apiKey.findUnique({
      where: { hash },
      select: { id: true, accountId: true, revokedAt: true, scopes: true, appId: true, expiresAt: true },
    });
    return (
      row && {
        accountId: row.accountId,
        keyId: row.id,
        revoked: row.revokedAt !== null,
        scopes: row.scopes ?? [],
        appId: row.appId,
        expiresAt: row.expiresAt,
      }
    );
  });
  if (!key) throw unauthenticated("Invalid API key.");
  if (key.revoked) throw unauthenticated("This API key has been revoked.");
  if (key.expiresAt && key.expiresAt <= new Date())
    throw unauthenticated(`This API key expired at ${key.expiresAt.toISOString()}.`);
  return {
    id: key.accountId,
    keyId: key.keyId,
    via: "key",
    scopes: key.scopes,
    ...(key.appId ? { appId: key.appId } : {}),
    ...(key.expiresAt ? { expiresAt: key.expiresAt } : {}),
  };
}

export function checkAdminToken(expected: string, header: string | undefined): void {
  const token = bearerToken(header);
  const a = Buffer.from(hashApiKey(token));
  const b = Buffer.from(hashApiKey(expected));
  if (!timingSafeEqual(a, b)) throw unauthenticated("Invalid admin token.");
}
