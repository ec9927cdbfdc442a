import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { fixtures, setupApp } from "./fixtures.ts";
import { type Receiver, startReceiver } from "./receiver.ts";
import { startSystem, type TestSystem } from "./system.ts";

/**
 * What the tests of authentication to endpoints share: a system with one app taking
 * `invoice.paid` (retries after 1 s), a receiver, a database client, servers of their own
 * made in the test, and helpers to verify a delivery with `standardwebhooks` and read an
 * attempt.
 */
export type AuthSystem = {
  sys: TestSystem;
  receiver: Receiver;
  f: ReturnType<typeof fixtures>;
  db: pg.Client;
  /** Listens on a free port of 127.0.0.1, closed with the rest; returns the port. */
  listen(server: Server): Promise<number>;
  /** The delivery's payload, verified with the endpoint's secret by `standardwebhooks`. */
  verified(endpointId: string, got: { headers: IncomingMessage["headers"]; body: string }): Promise<unknown>;
  /** The latest attempt of the event to the endpoint, as the API shows it. */
  lastAttempt(eventId: string, endpointId: string): Promise<Body>;
  close(): Promise<void>;
};

/** A response body of the API, as the test system gives it. */
type Body = Awaited<ReturnType<TestSystem["request"]>>["body"];

export const POLL = { timeout: 15_000, interval: 100 };

export const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });

export async function startAuthSystem(): Promise<AuthSystem> {
  const sys = await startSystem({ RETRY_SCHEDULE: "1s" });
  const db = new pg.Client({ connectionString: sys.databaseUrl });
  await db.connect();
  const receiver = await startReceiver();
  await setupApp(sys, ["invoice.paid"]);
  const servers: Server[] = [];
  return {
    sys,
    receiver,
    f: fixtures(sys, receiver),
    db,
    async listen(server) {
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return (server.address() as AddressInfo).port;
    },
    async verified(endpointId, got) {
      const secret = (await sys.request("GET", `/v3/endpoints/${endpointId}/secret`)).body.secret as string;
      return new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    },
    async lastAttempt(eventId, endpointId) {
      const list = (await sys.request("GET", `/v3/attempts?event=${eventId}&endpoint=${endpointId}`)).body
        .data;
      return (await sys.request("GET", `/v3/attempts/${list[0].id}`)).body;
    },
    async close() {
      for (const s of servers) {
        s.closeAllConnections();
        s.close();
      }
      await db.end();
      await sys.close();
      await receiver.close();
    },
  };
}
