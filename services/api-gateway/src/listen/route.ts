import { ApiError } from "../http/errors.ts";
import type { RouteSpec } from "../http/route.ts";
import { appRef } from "../resources/common.ts";

/**
 * `GET /v3/listen` as the reference documents it. The WebSocket itself is served before
 * Express (socket.ts); a plain request without the upgrade gets a 426 that says so.
 */
export const listenRoutes: RouteSpec[] = [
  {
    method: "get",
    path: "/v3/listen",
    auth: "account",
    scope: "endpoints:write",
    oneApp: true,
    tag: "Endpoints",
    summary: "Listen for deliveries over a WebSocket",
    description:
      'What `herald listen` uses: a WebSocket (send `Upgrade: websocket` with the API key in `Authorization`). Opening it makes a temporary endpoint of `app`, whose URL is `herald-listen://<its id>`; every attempt to it is sent down the socket, signed as any delivery, as a JSON text frame `{ type: "request", id, headers, body, timeout_ms }` (`timeout_ms`: how long the attempt waits for the answer), after a first `{ type: "ready", endpoint, secret }`. Answer each with `{ type: "response", id, status, headers, body }`: that is the attempt\'s response (a 2xx succeeds). An attempt not answered within the timeout fails as `timeout`; one made while no socket is open fails as `connection_error`. A socket holds at most 2 MiB of requests not yet answered (one request of any size when it holds none), a gateway 32 MiB over all its sockets: an attempt past that fails at once as `timeout`. Closing the socket deletes the endpoint; deleting the endpoint closes the socket within a second. A `Herald-Listen-Secret: whsec_…` header chooses the signing secret (else a new one). The endpoint cannot be changed, only deleted. At most LISTEN_MAX_PER_ACCOUNT sockets open at once an account, on all gateways (default 10; a socket whose endpoint was just deleted counts until it is closed), opened at 5 a second at most. Herald itself never calls a URL for it: the CLI forwards to your local server.',
    query: {
      type: "object",
      additionalProperties: false,
      required: ["app"],
      properties: {
        app: appRef,
        event_types: {
          type: "string",
          description: "Comma-separated event type names the endpoint receives; none: all.",
        },
      },
    },
    response: {
      status: 101,
      schema: { type: "object", description: "Switching to the WebSocket protocol; frames as above." },
      description: "The WebSocket is open.",
    },
    async handler() {
      throw new ApiError(
        426,
        "invalid_request_error",
        "upgrade_required",
        "GET /v3/listen is a WebSocket: connect with `Upgrade: websocket` (as `herald listen` does).",
        undefined,
        undefined,
        { upgrade: "websocket" },
      );
    },
  },
];
