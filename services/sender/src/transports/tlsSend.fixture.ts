import type { Target } from "@herald/contracts/destinations";
import { errorKind } from "../errorKind.ts";
import { createAmqpTransport } from "./amqp.ts";
import { createMqttTransport } from "./mqtt.ts";
import { createNatsTransport } from "./nats.ts";
import { createRedisTransport } from "./redis.ts";
import { createS3Transport } from "./s3.ts";
import { type Message, type SendContext, type Transport, TransportError } from "./types.ts";

/**
 * Sends given as JSON on stdin through a destination transport, each result printed as one JSON
 * line: tls.test.ts runs this in a child process so that the child's CA store (NODE_EXTRA_CA_CERTS,
 * read only at Node's start) can hold a test CA, with no option of the transports' own.
 *
 * stdin: `[{ target, message, credentials }]`; stdout: per send,
 * `{ ok: true, detail, resolved }` or `{ ok: false, kind, code, message, resolved }`.
 */

export type TlsSend = { target: Target; message: Message; credentials: SendContext["credentials"] };
export type TlsSendResult =
  | { ok: true; detail: string; resolved: string[] }
  | { ok: false; kind: string; code: string | null; message: string; resolved: string[] };

const FACTORIES: Record<Target["type"], () => Transport> = {
  amqp: () => createAmqpTransport() as Transport,
  nats: () => createNatsTransport() as Transport,
  redis: () => createRedisTransport() as Transport,
  mqtt: () => createMqttTransport() as Transport,
  s3: () => createS3Transport() as Transport,
};

/** The target's host resolves to 127.0.0.1 (it resolves nowhere else); any other name is refused. */
function contextFor(send: TlsSend, resolved: string[]): SendContext {
  return {
    signal: AbortSignal.timeout(10_000),
    timeoutMs: 10_000,
    credentials: send.credentials,
    resolve: async (host) => {
      resolved.push(host);
      if (host !== send.target.host) throw new Error(`resolved ${host}, not the target's host`);
      return "127.0.0.1";
    },
  };
}

async function run(send: TlsSend): Promise<TlsSendResult> {
  const transport = FACTORIES[send.target.type]();
  const resolved: string[] = [];
  try {
    const receipt = await transport.send(send.target, send.message, contextFor(send, resolved));
    return { ok: true, detail: receipt.detail, resolved };
  } catch (err) {
    const kind = err instanceof TransportError ? err.kind : errorKind(err);
    const code = (err as { code?: unknown }).code;
    return { ok: false, kind, code: typeof code === "string" ? code : null, message: String(err), resolved };
  } finally {
    await transport.close().catch(() => {});
  }
}

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const sends = JSON.parse(Buffer.concat(chunks).toString("utf8")) as TlsSend[];
// One after another, each with a transport of its own: no send reuses another's connection.
for (const send of sends) process.stdout.write(`${JSON.stringify(await run(send))}\n`);
// A client library's timer or socket left behind must not keep the child alive.
process.exit(0);
