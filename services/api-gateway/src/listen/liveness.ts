import type { WebSocket } from "ws";
import type { Deps } from "../context.ts";

/** How often a gateway checks its sockets' endpoints and keys: a deleted one's socket closes within a second. */
export const LIVENESS_MS = 500;

/** The endpoints, of those given, that are not deleted and whose socket's API key still works. */
const LIVE = `SELECT s.endpoint_id FROM unnest($1::text[], $2::text[]) AS s(endpoint_id, key_id)
  WHERE EXISTS (SELECT 1 FROM endpoints e WHERE e.id = s.endpoint_id AND e.deleted_at IS NULL)
    AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = s.key_id AND k.revoked_at IS NULL
                AND (k.expires_at IS NULL OR k.expires_at > now()))`;

/**
 * The `herald listen` sockets one gateway holds, by endpoint, checked all together twice a
 * second: a socket whose endpoint was deleted (through the API on any gateway, or by the
 * dispatcher) or whose API key was revoked or expired is closed, so its place under
 * LISTEN_MAX_PER_ACCOUNT is given back within a second. One query by primary keys however many
 * sockets, none while there are none, and nothing to publish or to miss: the database says it,
 * whichever replica served the deletion.
 */
export class LiveSockets {
  private readonly sockets = new Map<string, { ws: WebSocket; keyId: string }>();
  private readonly timer: NodeJS.Timeout;
  private checking = false;
  /** Said once when checks start failing, not twice a second. */
  private failing = false;

  constructor(private readonly deps: Deps) {
    this.timer = setInterval(() => void this.check(), LIVENESS_MS);
    this.timer.unref();
  }

  add(endpointId: string, keyId: string, ws: WebSocket): void {
    this.sockets.set(endpointId, { ws, keyId });
  }

  delete(endpointId: string): void {
    this.sockets.delete(endpointId);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async check(): Promise<void> {
    // A slow database: one check at a time, the next tick tries again.
    if (this.checking || this.sockets.size === 0) return;
    this.checking = true;
    const held = [...this.sockets];
    try {
      const { rows } = await this.deps.pool.query<{ endpoint_id: string }>(LIVE, [
        held.map(([endpointId]) => endpointId),
        held.map(([, s]) => s.keyId),
      ]);
      this.failing = false;
      const live = new Set(rows.map((r) => r.endpoint_id));
      for (const [endpointId, { ws }] of held)
        if (!live.has(endpointId)) ws.close(1000, "endpoint deleted, or its API key revoked");
    } catch (err) {
      if (!this.failing) this.deps.logger.warn({ err }, "listen sockets not checked now; tried again");
      this.failing = true;
    } finally {
      this.checking = false;
    }
  }
}
