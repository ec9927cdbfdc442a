import { apiError, HeraldApiError, HeraldConnectionError } from "@herald/sdk";
import WebSocket from "ws";
import { type Command, type Context, sleep, str } from "../command.ts";
import { listenSecret } from "../config.ts";
import { CliError, UsageError } from "../errors.ts";
import { bold, clean, dim, green, note, out, red, time, yellow } from "../output.ts";
import { type Forwarded, forward, type Relayed } from "./forward.ts";

/**
 * `herald listen --forward-to URL --app APP`: holds the gateway's listen WebSocket
 * (`/v3/listen`), which makes a temporary endpoint of the app; each delivery to it comes down
 * the socket, is POSTed to the local URL, and the local answer goes back up as the attempt's
 * response. The endpoint is signed with the profile's listen secret, the same every session.
 * A lost connection is made again (a new endpoint, the same secret); Ctrl-C closes the socket
 * and the gateway deletes the endpoint.
 */
type Ready = { endpoint: { id: string; app: string; event_types: string[] }; secret: string };
type Ended =
  | { kind: "stopped" }
  | { kind: "ended"; why: string }
  | { kind: "lost"; why: string; opened: boolean }
  | { kind: "refused"; error: Error };

/** The server pings every 20 s: silence for this long is a dead connection. */
const SILENCE_MS = 60_000;

function wsUrl(base: string, app: string, events: string | undefined): string {
  const url = new URL(`${base}/v3/listen`);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("app", app);
  if (events) url.searchParams.set("event_types", events);
  return url.href;
}

/** The handshake's error answer as the SDK's error: exit codes and messages as for any request. */
function refusal(res: import("node:http").IncomingMessage): Promise<Error> {
  return new Promise((resolve) => {
    let text = "";
    res.on("data", (chunk: Buffer) => {
      if (text.length < 65_536) text += chunk;
    });
    res.on("end", () => {
      const status = res.statusCode ?? 0;
      let error = {
        type: "api_error",
        code: "unexpected_response",
        message: `The gateway answered ${status}.`,
      };
      try {
        error = JSON.parse(text).error ?? error;
      } catch {}
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") headers.set(k, v);
      resolve(
        apiError({ status, error, headers, requestId: headers.get("request-id"), idempotencyKey: null }),
      );
    });
  });
}

function report(ctx: Context, request: Relayed, result: Forwarded): void {
  let type = "";
  try {
    type = String(JSON.parse(request.body).type ?? "");
  } catch {}
  const event = request.headers["webhook-id"] ?? "";
  if (ctx.json) {
    out(
      JSON.stringify({
        type: "delivery",
        event,
        event_type: type,
        status: result.status,
        duration_ms: result.ms,
        ...(result.error ? { error: result.error } : {}),
      }),
    );
    return;
  }
  const code = result.error
    ? red(`failed (${result.error})`)
    : result.status < 300
      ? green(String(result.status))
      : red(String(result.status));
  out(
    clean(
      `${time(new Date().toISOString())}  ${type.padEnd(20)} ${event}  ${bold("→")} ${code} ${dim(`${result.ms} ms`)}`,
    ),
  );
}

/** A `ready` frame as the CLI needs it, or null: a frame from a hostile gateway never crashes it. */
function readyOf(frame: Record<string, unknown>): Ready | null {
  const endpoint = frame.endpoint as Record<string, unknown> | undefined;
  if (!endpoint || typeof endpoint.id !== "string" || typeof frame.secret !== "string") return null;
  const types = Array.isArray(endpoint.event_types)
    ? endpoint.event_types.filter((t) => typeof t === "string")
    : [];
  return {
    endpoint: { id: endpoint.id, app: String(endpoint.app ?? ""), event_types: types },
    secret: frame.secret,
  };
}

/** One socket's life, until it closes; each request forwarded as it comes. */
function session(
  ctx: Context,
  url: string,
  secret: string,
  target: string,
  onReady: (r: Ready) => void,
): Promise<Ended> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${ctx.settings.apiKey}`, "herald-listen-secret": secret },
      handshakeTimeout: 15_000,
    });
    let opened = false;
    let ended: Ended | null = null;
    const end = (e: Ended) => {
      ended ??= e;
    };
    let silence: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        end({ kind: "lost", why: "no ping from the gateway for a minute", opened });
        ws.terminate();
      }, SILENCE_MS);
    };
    const stop = () => {
      end({ kind: "stopped" });
      ws.close(1000, "herald listen stopped");
      // A gateway that does not answer the close is not waited for long.
      setTimeout(() => ws.terminate(), 3000).unref();
    };
    ctx.stopped.addEventListener("abort", stop, { once: true });
    ws.on("unexpected-response", (_req, res) => {
      void refusal(res).then((error) => {
        end({ kind: "refused", error });
        ws.terminate();
      });
    });
    ws.on("open", heard);
    ws.on("ping", heard);
    ws.on("message", (data, isBinary) => {
      heard();
      if (isBinary) return;
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(String(data));
      } catch {
        return;
      }
      if (!frame || typeof frame !== "object") return;
      if (frame.type === "ready") {
        const ready = readyOf(frame);
        if (!ready) return;
        opened = true;
        onReady(ready);
      } else if (frame.type === "request" && Number.isSafeInteger(frame.id)) {
        const request: Relayed = {
          id: frame.id as number,
          headers:
            frame.headers && typeof frame.headers === "object"
              ? (frame.headers as Record<string, string>)
              : {},
          body: typeof frame.body === "string" ? frame.body : "",
          timeout_ms: typeof frame.timeout_ms === "number" ? frame.timeout_ms : undefined,
        };
        void forward(target, request, ctx.stopped).then((result) => {
          if (ctx.stopped.aborted) return;
          report(ctx, request, result);
          if (ws.readyState === WebSocket.OPEN)
            ws.send(
              JSON.stringify({
                type: "response",
                id: request.id,
                status: result.status,
                headers: result.headers,
                body: result.body,
              }),
            );
        });
      }
    });
    ws.on("error", (err) =>
      end({ kind: "lost", why: (err as NodeJS.ErrnoException).code ?? err.message, opened }),
    );
    ws.on("close", (code, reason) => {
      clearTimeout(silence);
      ctx.stopped.removeEventListener("abort", stop);
      // 1000 from the gateway: it ended the session on purpose (the endpoint deleted, the key
      // revoked); connecting again would only make a new endpoint nobody asked for.
      if (code === 1000) end({ kind: "ended", why: reason.toString() || "closed by the gateway" });
      end({ kind: "lost", why: `closed (${code}${reason.length ? `: ${reason}` : ""})`, opened });
      // A refusal's body may still be on its way.
      setTimeout(() => resolve(ended!), 50);
    });
  });
}

/** Worth connecting again once a session has been open: the gateway busy, or the old socket not yet gone. */
function retryable(error: Error): boolean {
  if (!(error instanceof HeraldApiError)) return false;
  return error.status >= 500 || error.status === 429 || error.code === "listen_limit_reached";
}

export const listenCommand: Command = {
  name: "listen",
  handlesStop: true,
  usage: "listen --forward-to URL --app APP [--events a,b] [--print-secret]",
  summary: "Forwards an app's deliveries to a server on this machine, signed as in production, until Ctrl-C.",
  help: `  --forward-to URL   where each delivery is POSTed, e.g. http://localhost:3000/webhooks
  --app APP          the app (id or uid) whose events to receive
  --events a,b       only these event types (default: all)
  --print-secret     print this profile's signing secret and exit

A temporary endpoint of the app receives the deliveries; it is deleted when this stops. Each is
signed with this profile's listen secret, the same every time: give it to your server once.
Nothing needs a public address: the CLI holds a WebSocket to the gateway.`,
  options: {
    "forward-to": { type: "string" },
    app: { type: "string" },
    events: { type: "string" },
    "print-secret": { type: "boolean" },
  },
  async run(ctx) {
    const secret = listenSecret(ctx.settings.profile);
    if (ctx.values["print-secret"]) return void out(secret);
    const target = str(ctx.values, "forward-to");
    if (!target) throw new UsageError("--forward-to is required: the local URL to POST each delivery to.");
    if (!URL.canParse(target) || !/^https?:$/.test(new URL(target).protocol))
      throw new UsageError(`--forward-to must be an http or https URL, got "${target}".`);
    const app = str(ctx.values, "app");
    if (!app) throw new UsageError("--app is required: the app (id or uid) whose deliveries to receive.");
    ctx.herald(); // No API key: said now, as by any command.
    const url = wsUrl(ctx.settings.url, app, str(ctx.values, "events"));
    let everOpened = false;
    for (let retry = 0; ; ) {
      const ended = await session(ctx, url, secret, target, (ready) => {
        retry = 0;
        // The secret is printed once: `--print-secret` gives it to scripts, never a log line.
        if (ctx.json)
          out(
            JSON.stringify({
              type: "ready",
              endpoint: ready.endpoint.id,
              app: ready.endpoint.app,
              forward_to: target,
            }),
          );
        else {
          const types = ready.endpoint.event_types.length
            ? ready.endpoint.event_types.join(", ")
            : "all event types";
          note(
            `${green(everOpened ? "Connected again." : "Ready.")} Deliveries for ${app} (${types}) now go to ${bold(target)}`,
          );
          note(`  ${dim("endpoint")}        ${ready.endpoint.id} ${dim("(deleted when this stops)")}`);
          note(`  ${dim("signing secret")}  ${everOpened ? dim("unchanged") : ready.secret}`);
          if (!everOpened) note(dim("Ctrl-C to stop."));
        }
        everOpened = true;
      });
      if (ended.kind === "stopped") return 0;
      if (ended.kind === "ended") throw new CliError(`The gateway ended the session: ${clean(ended.why)}.`);
      if (ended.kind === "refused") {
        // Final before any session opened, unless the gateway is busy; after, also while the
        // old socket still counts against the account's limit.
        const busy = ended.error instanceof HeraldApiError && ended.error.status >= 500;
        if (!busy && !(everOpened && retryable(ended.error))) throw ended.error;
        note(yellow(`The gateway refused for now: ${clean(ended.error.message)}`));
      } else if (!everOpened) {
        throw new HeraldConnectionError(
          `Could not open the listen socket at ${ctx.settings.url}: ${ended.why}.`,
          null,
        );
      } else note(yellow(`Connection lost: ${ended.why}.`));
      const wait = Math.min(30_000, 1000 * 2 ** retry++);
      note(dim(`Connecting again in ${wait / 1000} s…`));
      await sleep(wait, ctx.stopped);
      if (ctx.stopped.aborted) return 0;
    }
  },
};
