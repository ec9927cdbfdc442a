/**
 * The transactional outbox: the `outbox` table and every statement on it. A change and the
 * message announcing it are written in one transaction; after the commit the message is
 * published with publisher confirms and its row deleted once confirmed. A relay publishes every
 * row still there after a while: the broker was down, the process died between commit and
 * confirm, or the confirm was lost. A message can so be published twice; consumers dedupe by
 * the ids inside it (the dispatcher by event id).
 *
 * Here, the statements (no Prisma: the dispatcher has none):
 * - rows.ts: what a row is, and writing rows (`insertOutboxRows`, the table's one writer;
 *   `stageMessage`, one message in the caller's transaction);
 * - claim.ts: the relay's claim on the rows left behind (`claimForRelay`);
 * - delete.ts: deleting rows once published (`deleteConfirmed`, `deleteRows`).
 *
 * Elsewhere, the services' use of it:
 * - the gateway writes its messages with the change (its event writer's group commit,
 *   services/api-gateway/src/eventWriter.ts; `OutboxRelay.stage` for the rest), and its
 *   `OutboxRelay` (services/api-gateway/src/outboxRelay.ts) publishes them after the commit and
 *   runs the relay loop over every row, whoever wrote it;
 * - the lifecycle writes operational notices' rows with their events (lifecycle/operational.ts),
 *   which the dispatcher publishes after the commit (services/dispatcher/src/publishStaged.ts);
 * - the dispatcher writes the `endpoint.deleted.v1` of ended listen endpoints
 *   (services/dispatcher/src/endListeners.ts), left to the gateway's relay.
 */
export { claimForRelay } from "./claim.ts";
export { deleteConfirmed, deleteRows } from "./delete.ts";
export {
  insertOutboxRows,
  type OutboxRow,
  type StagedMessage,
  type Statements,
  stageMessage,
} from "./rows.ts";
