/**
 * How long one long-running control message (an app's deletion, a replay) is worked on before
 * it is put back at the end of its queue as a continuation and acked: 60 s. Far under
 * RabbitMQ's consumer timeout (30 min), after which it would close the channel, and short
 * enough that another tenant's drops, replays and deletions take their turn in between.
 */
export const SLICE_MS = 60_000;
