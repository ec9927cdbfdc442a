import type { Transport } from "../client.ts";
import type { Replay } from "../generated/openapi.ts";
import type { RequestOptions } from "../options.ts";

/** Replays (`/v3/replays`): the progress of `herald.endpoints.replay`. */
export class Replays {
  constructor(private readonly transport: Transport) {}

  /** `GET /v3/replays/{id}`: queued, attempted, succeeded and failed so far. */
  retrieve(id: string, options?: RequestOptions): Promise<Replay> {
    return this.transport.call("retrieveReplay", { params: { id } }, options);
  }
}
