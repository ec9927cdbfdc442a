import type { AttemptStatus, DeliveryStatus } from "@herald/contracts/statuses";
import { createPool, createPrisma, newId, type PrismaClient } from "@herald/db";

/**
 * Rows only the dispatcher writes (deliveries and attempts), seeded straight into a test's
 * database so the gateway's reads of them can be tested on their own.
 */
export type Seeder = {
  prisma: PrismaClient;
  delivery(input: {
    eventId: string;
    endpointId: string;
    status: DeliveryStatus;
    attempts?: number;
    lastAttemptAt?: Date;
  }): Promise<string>;
  attempt(input: { deliveryId: string; status: AttemptStatus; attemptNumber: number }): Promise<string>;
  close(): Promise<void>;
};

export function seeder(databaseUrl: string): Seeder {
  const pool = createPool(databaseUrl, 2);
  const prisma = createPrisma(pool);
  return {
    prisma,
    async delivery({ eventId, endpointId, status, attempts = 1, lastAttemptAt = new Date() }) {
      const event = await prisma.event.findUniqueOrThrow({ where: { id: eventId } });
      const row = await prisma.delivery.create({
        data: {
          id: newId("delivery"),
          accountId: event.accountId,
          appId: event.appId,
          eventId,
          endpointId,
          status,
          attempts,
          lastAttemptAt,
          updatedAt: lastAttemptAt,
        },
      });
      return row.id;
    },
    async attempt({ deliveryId, status, attemptNumber }) {
      const delivery = await prisma.delivery.findFirstOrThrow({
        where: { id: deliveryId },
        include: { endpoint: true },
      });
      const done = status !== "pending";
      const row = await prisma.attempt.create({
        data: {
          id: newId("attempt"),
          accountId: delivery.accountId,
          appId: delivery.appId,
          deliveryId,
          eventId: delivery.eventId,
          endpointId: delivery.endpointId,
          attemptNumber,
          status,
          url: delivery.endpoint.url,
          scheduledAt: new Date(),
          ...(done
            ? {
                responseStatus: status === "succeeded" ? 200 : 500,
                responseBody: "ok",
                durationMs: 12,
                completedAt: new Date(),
              }
            : {}),
          ...(status === "failed" ? { error: "http_error" } : {}),
        },
      });
      return row.id;
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
