import { type BatchPublisher, type Broker, batchPublisher } from "@herald/broker";
import type { EventCreatedV1, MessageName, MessageTypes } from "@herald/contracts";
import { newId, type Pool, type Prisma, type PrismaClient } from "@herald/db";
import type { DatabaseOutage } from "@herald/db/outage";
import {
  claimForRelay,
  deleteConfirmed,
  deleteRows,
  type OutboxRow,
  type Statements,
  stageMessage,
} from "@herald/db/outbox";
import { context, contextFrom, type Logger, traceHeaders } from "@herald/runtime";

/**
 * The gateway's use of the transactional outbox (the table and its statements:
 * packages/db/src/outbox). A change and the message announcing it are written in one
 * transaction (`stage`, or the event writer's group commit); after commit the message is
 * published with publisher confirms (`publishAfterCommit`) and its row deleted once confirmed.
 * The relay loop publishes every row older than `relayAfterMs` that is still there, whoever
 * wrote it (the dispatcher's too): the broker was down, the process died between commit and
 * confirm, or the confirm was lost. A message can so be published twice; consumers dedupe by
 * the ids inside it (the dispatcher by event id).
 *
 * Accepted events are published several to a message (`events.created.v1`, at most
 * `eventsPerMessage`, EVENTS_PER_MESSAGE): those committed while the last ones were being
 * confirmed go together (the broker's batchPublisher), each row deleted once the message
 * carrying it is confirmed. The relay republishes rows one a message.
 */
type Tx = Pick<Prisma.TransactionClient, "$queryRawUnsafe">;

/** The outbox's statements, run in a Prisma transaction. */
export const inPrisma = (tx: Tx): Statements => ({
  query: async (text, values) => ({ rows: await tx.$queryRawUnsafe<unknown[]>(text, ...values) }),
});

export type OutboxOptions = {
  relayIntervalMs: number;
  relayAfterMs: number;
  batchSize?: number;
  /** Events per message at most; 1 publishes each alone, as `event.created.v1`. */
  eventsPerMessage?: number;
};

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private relaying: Promise<void> | null = null;
  private confirmed: bigint[] = [];
  private flushing: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly events: BatchPublisher<EventCreatedV1> | null;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
    private readonly broker: Broker,
    private readonly logger: Logger,
    /** A failed pass the database's absence explains is part of that outage. */
    private readonly dbOutage: DatabaseOutage,
    private readonly options: OutboxOptions,
  ) {
    const perMessage = options.eventsPerMessage ?? 1;
    this.events =
      perMessage > 1
        ? batchPublisher(
            broker,
            "events.created.v1",
            "event.created.v1",
            (events: EventCreatedV1[]) => ({ events }),
            perMessage,
          )
        : null;
  }

  /** A message as the outbox stores it, carrying the active trace context (the request's). */
  message<K extends MessageName>(name: K, payload: MessageTypes[K]): Omit<OutboxRow, "id"> {
    return { name, messageId: newId("message"), payload, headers: traceHeaders() };
  }

  /** Writes a message inside the caller's transaction. */
  stage<K extends MessageName>(tx: Tx, name: K, payload: MessageTypes[K]): Promise<OutboxRow> {
    return stageMessage(inPrisma(tx), this.message(name, payload));
  }

  /** Publishes committed rows without making the caller wait; the relay covers any failure. */
  publishAfterCommit(rows: OutboxRow[]): void {
    if (!this.broker.connected) return;
    const work = Promise.all(rows.map((row) => this.publish(row))).then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  private async publish(row: OutboxRow): Promise<void> {
    const trace = contextFrom(row.headers as Record<string, string>);
    if (this.events && row.name === "event.created.v1") {
      const { events } = this;
      await context.with(trace, () => events.add(row.payload as EventCreatedV1));
    } else {
      await this.broker.publish(row.name as MessageName, row.payload as MessageTypes[MessageName], {
        messageId: row.messageId,
        context: trace,
      });
    }
    this.confirmed.push(row.id);
    if (this.confirmed.length >= 200) void this.flush();
    else this.flushSoon();
  }

  private flushTimer: NodeJS.Timeout | null = null;
  private flushSoon(): void {
    this.flushTimer ??= setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, 20);
  }

  /** Deletes confirmed rows in one statement per batch (plain SQL: Prisma's took gateway CPU). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.confirmed.length) return;
    const ids = this.confirmed;
    this.confirmed = [];
    this.flushing = deleteConfirmed(this.pool, ids)
      .catch((err) => {
        // Left in place, the rows are republished by the relay; consumers dedupe.
        this.dbOutage.passFailed(err, "could not delete confirmed outbox rows", { rows: ids.length });
      })
      .finally(() => {
        this.flushing = null;
      });
    await this.flushing;
  }

  /** One relay pass: publishes and deletes rows the inline publish left behind. Returns rows published. */
  async relayOnce(): Promise<number> {
    if (!this.broker.connected) return 0;
    const batch = this.options.batchSize ?? 500;
    const before = new Date(Date.now() - this.options.relayAfterMs);
    let published = 0;
    await this.prisma.$transaction(
      async (tx) => {
        const rows = await claimForRelay(inPrisma(tx), before, batch);
        if (!rows.length) return;
        await Promise.all(
          rows.map((row) =>
            this.broker.publish(row.name as MessageName, row.payload as MessageTypes[MessageName], {
              messageId: row.messageId,
              context: contextFrom(row.headers as Record<string, string>),
            }),
          ),
        );
        await deleteRows(
          inPrisma(tx),
          rows.map((r) => r.id),
        );
        published = rows.length;
      },
      { timeout: 30_000 },
    );
    if (published) this.logger.info({ published }, "outbox relay published messages");
    return published;
  }

  /** Runs the relay now (coalesced with a pass already running). */
  kick(): Promise<void> {
    this.relaying ??= (async () => {
      try {
        while ((await this.relayOnce()) > 0) {}
      } catch (err) {
        this.dbOutage.passFailed(err, "outbox relay pass failed; will retry");
      } finally {
        this.relaying = null;
      }
    })();
    return this.relaying;
  }

  start(): void {
    this.timer = setInterval(() => void this.kick(), this.options.relayIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.all([...this.inFlight]);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.flush();
    await this.relaying;
  }
}
