import { newId, type PrismaClient } from "@herald/db";
import type { Logger } from "@herald/runtime";
import { hashApiKey } from "./http/auth.ts";
import { createApiKey } from "./resources/apiKeys/index.ts";

/**
 * BOOTSTRAP_API_KEY: after start, an account holding exactly this key exists. Several
 * replicas may race here; the unique key hash lets exactly one create it.
 */
export async function ensureBootstrapAccount(
  prisma: PrismaClient,
  key: string,
  logger: Logger,
): Promise<void> {
  const hash = hashApiKey(key);
  if (await prisma.apiKey.findUnique({ where: { hash }, select: { id: true } })) return;
  try {
    await prisma.$transaction(async (tx) => {
      const account = await tx.account.create({ data: { id: newId("account"), name: "Default account" } });
      await createApiKey(tx, account.id, "bootstrap", { key, hash, prefix: key.slice(0, 10) });
      logger.info({ account: account.id }, "created the bootstrap account for BOOTSTRAP_API_KEY");
    });
  } catch (err) {
    if ((err as { code?: string }).code !== "P2002") throw err;
  }
}
