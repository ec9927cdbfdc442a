import { Redis } from "ioredis";

/**
 * The Redis Streams of the destination scenario (`--destination redis`): one per endpoint, named
 * `herald_bench_<run>_<n>` (apps.ts), on the server at REDIS_URL. The load generator reads their
 * entries as the sender adds them, as the receivers see HTTP deliveries arrive; main checks the
 * server is there before the run and deletes the streams once a profile is done.
 */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379/0";

/** A client that fails at once when the server is not there, rather than reconnecting forever. */
function connect(url: string): Promise<Redis> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on("error", () => {});
  return client.connect().then(
    () => client,
    (err: unknown) => {
      client.disconnect();
      throw new Error(`Redis at ${url}: ${err instanceof Error ? err.message : String(err)}`);
    },
  );
}

async function withRedis<T>(url: string, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = await connect(url);
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

export const pingRedis = (url: string) => withRedis(url, (client) => client.ping());

export const deleteStreams = (url: string, streams: string[]) =>
  withRedis(url, (client) => client.del(...streams));

/**
 * Reads every entry of `streams` from the first on (they are new each run), calling `onEntry`
 * with its `webhook-id` field (the event id) as each arrives. The returned function stops
 * reading, and throws what broke the reading if anything did.
 */
export async function readStreams(
  url: string,
  streams: string[],
  onEntry: (eventId: string, stream: string) => void,
): Promise<() => Promise<void>> {
  const client = await connect(url);
  const last = streams.map(() => "0-0");
  let stopped = false;
  let failure: unknown = null;
  const reading = (async () => {
    while (!stopped) {
      // Blocks until an entry comes; stopping ends the connection, and so the wait.
      const reply = await client.xread("COUNT", 1000, "BLOCK", 0, "STREAMS", ...streams, ...last);
      for (const [stream, entries] of reply ?? []) {
        const at = streams.indexOf(stream);
        for (const [id, fields] of entries) {
          last[at] = id;
          for (let f = 0; f < fields.length; f += 2)
            if (fields[f] === "webhook-id") onEntry(fields[f + 1]!, stream);
        }
      }
    }
  })().catch((err: unknown) => {
    if (!stopped) failure = err;
  });
  return async () => {
    stopped = true;
    client.disconnect();
    await reading;
    if (failure) throw new Error(`reading the Redis streams: ${String(failure)}`);
  };
}
