import { inline, isRecord, literal, p, pre, table } from "./docsHtml.ts";
import type { OpenApiDocument } from "./document.ts";

/** The introduction of the API reference: overview, conventions, errors, signatures. */

export function errorDescription(doc: OpenApiDocument, status: string): string {
  const response = doc.components.responses[`Error${status}`];
  return isRecord(response) && typeof response.description === "string" ? response.description : "";
}

// ---- Introduction ----

const ERROR_TYPES: [string, string][] = [
  ["400", "invalid_request_error"],
  ["401", "authentication_error"],
  ["403", "invalid_request_error (`forbidden`)"],
  ["404", "invalid_request_error (`resource_missing`)"],
  ["409", "invalid_request_error"],
  ["413", "invalid_request_error"],
  ["415", "invalid_request_error"],
  ["422", "invalid_request_error (`schema_validation_failed`)"],
  ["429", "rate_limit_error"],
];

function errorTable(doc: OpenApiDocument): string {
  const rows = [
    ...ERROR_TYPES.map(([status, type]) => [status, type, errorDescription(doc, status)]),
    ["5xx", "api_error", "Something failed on our side. The body never carries a stack trace; retry later."],
  ];
  return table(
    ["Status", "Type", "When"],
    rows.map(([status = "", type = "", when = ""]) => [
      `<span id="status-${status}" class="status">${status}</span>`,
      inline(type),
      inline(when),
    ]),
  );
}

export function introSections(doc: OpenApiDocument): [string, string][] {
  const description = typeof doc.info.description === "string" ? doc.info.description : "";
  return [
    [
      "Overview",
      p(description) +
        p(
          'Every path starts with `/v3`; responses are JSON. Every object carries `"object": "<kind>"` and belongs to one account: another account\'s object is a `404`, never a `403`, so ids cannot be probed. Wherever an app is named, in a path or a field, its `uid` works in place of its `id`.',
        ) +
        p(
          "This page lists each route. How they fit together (accounts and keys, apps, event types and schemas, endpoints, filters, ordering, replay, portal links, operational webhooks), with examples, is in the API guide, `docs/api-guide.md` in Herald's repository; how an event is delivered, retried and kept, and what is guaranteed, in `docs/delivery.md` beside it.",
        ),
    ],
    [
      "Authentication",
      p(
        "Send your API key on every `/v3` call as `Authorization: Bearer <API_KEY>`. Keys (`hk_…`) belong to one account, are stored hashed and are shown once, when created. A missing, malformed or revoked key is a `401`.",
      ) + pre('curl "$HERALD_URL/v3/apps" -H "Authorization: Bearer $HERALD_API_KEY"'),
    ],
    [
      "Request bodies",
      p(
        "Bodies are `application/json` or `application/x-www-form-urlencoded`, with identical meaning. In a form body, arrays are `name[]=a&name[]=b`, maps are `headers[X-Foo]=bar`, and a field whose value is JSON (`data`, `schema`) is sent as a JSON string. Any other content type is a `415`; a body over 1 MiB is a `413`. These two requests are the same:",
      ) +
        pre(`curl "$HERALD_URL/v3/events" -H "Authorization: Bearer $HERALD_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"app":"acme","type":"invoice.paid","data":{"invoice":"in_1042"}}'

curl "$HERALD_URL/v3/events" -H "Authorization: Bearer $HERALD_API_KEY" \\
  -d app=acme -d type=invoice.paid \\
  --data-urlencode 'data={"invoice":"in_1042"}'`),
    ],
    [
      "Errors",
      p(
        "Every error has the same shape. `param` names the parameter at fault, when there is one; a `422` adds `details`, one entry (`path`, `message`) per violation.",
      ) +
        pre(`{ "error": { "type": "invalid_request_error", "code": "parameter_invalid",
             "message": "limit must be between 1 and 100.", "param": "limit" } }`) +
        errorTable(doc),
    ],
    [
      "Paging",
      p(
        "`GET` on a collection returns a page, newest first: `limit` (1 to 100, default 25; anything else is a `400`, never clamped), `starting_after=<id>` for the next, older page (pass the last id of this page) and `ending_before=<id>` for the previous, newer one. Paging is stable while new objects arrive.",
      ) + pre('{ "object": "list", "data": [ … ], "has_more": true }'),
    ],
    [
      "Idempotency",
      p(
        "Every `POST` takes an `Idempotency-Key` header (up to 255 characters). The same key with the same body within 24 hours returns the first response again and does nothing twice; the same key with another body is a `409` (`idempotency_conflict`). Retry a failed request with the key you sent the first time.",
      ),
    ],
    [
      "Ids and timestamps",
      p(
        "Ids are opaque, prefixed and time-sortable: `app_…`, `ep_…`, `evt_…`, `atmpt_…`, `rpl_…`, `key_…`. Timestamps are ISO 8601 UTC with milliseconds (`2026-11-21T10:00:00.000Z`); inputs that take a time also accept unix seconds.",
      ),
    ],
    [
      "Delivery states",
      p("An event has one delivery per receiving endpoint; each is in one of these states:") +
        table(
          ["Status", "Meaning"],
          [
            ["pending", "An attempt is scheduled or in flight."],
            ["succeeded", "An attempt got a 2xx."],
            ["retrying", "The last attempt failed; another is scheduled (`next_attempt_at`)."],
            [
              "failed",
              "The schedule ran out, or the endpoint was disabled. A replay puts it back to `pending`.",
            ],
            ["dropped", "The endpoint was deleted while an attempt was still due."],
            [
              "cancelled",
              "The endpoint's transformation cancelled it (`cancel: true`): nothing was sent. Neither a success nor a failure.",
            ],
          ].map(([status, meaning]) => [literal(status), inline(meaning ?? "")]),
        ),
    ],
    [
      "Webhook signatures",
      p(
        'Herald follows Standard Webhooks. Each delivery is a `POST` to the endpoint URL with `content-type: application/json`, the body `{ "type": …, "timestamp": …, "data": … }` and three headers: `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (unix seconds of this attempt) and `webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`. The HMAC key is the base64 after `whsec_` in the endpoint\'s secret. During a secret rotation several signatures are sent, space-separated; accept the request if any matches, and reject timestamps more than a few minutes old.',
      ) +
        pre(`import { createHmac, timingSafeEqual } from "node:crypto";

function verify(secret, id, timestamp, body, signatureHeader) {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(\`\${id}.\${timestamp}.\${body}\`).digest();
  return signatureHeader.split(" ").some((s) => {
    const [version, sig] = s.split(",");
    const given = Buffer.from(sig ?? "", "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}`),
    ],
    [
      "Retries",
      p(
        "A 2xx within the timeout (15 s by default) is a success; redirects are not followed. After a failed first attempt Herald retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: 8 attempts in all by default. A `Retry-After` on a `429` or `503` is honoured up to the next step. When the schedule runs out the delivery is `failed`; replay it from the endpoint.",
      ),
    ],
    [
      "Event type names",
      p(
        "Names use only `[a-z0-9._]`, 1 to 64 characters, and are permanent. The recommended form is `<noun>.<past-tense verb>`, such as `invoice.paid` or `user.created`; it is advised, not enforced.",
      ),
    ],
  ];
}
