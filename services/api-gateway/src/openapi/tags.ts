/**
 * The API's sections: every route names one (`RouteSpec.tag`), and each is described here,
 * in the OpenAPI document's `tags` and at the head of its section of /docs. A route with a
 * section not listed here does not compile.
 */
export const TAGS = {
  Apps: "An app is the record of one of your customers: its endpoints, events and attempts belong to it. Name it by your own id with `uid`.",
  "Event types":
    "The kinds of events you send (`invoice.paid`), each with an optional JSON Schema that every event of the type must match, and the example the portal shows.",
  Events:
    "An event is sent once to Herald and delivered to every endpoint of its app that takes its type and whose filter matches. Retrieve it to see each delivery's state.",
  Endpoints:
    "Where an app's customer receives events: a URL, the event types it takes, an optional filter and order, its rate and in-flight limits, custom headers, authentication, and the secret its deliveries are signed with. Its failed deliveries can be replayed.",
  Attempts:
    "Every request Herald made to an endpoint, with the response or the error kind: what happened to each delivery, one by one and in statistics.",
  "Operational webhooks":
    "What Herald tells you about your endpoints (disabled, paused, recovered), deliveries that ran out of retries, and replays that completed, delivered to an endpoint of yours like any event.",
  Sessions:
    "Links that open the portal for one app (for your customer) or the dashboard for your account, and the sessions behind them.",
  "API keys": "The account's API keys: create, list and revoke. A key is shown once, when created.",
  "Audit log":
    "Who changed what in the account, when and from where: every change made through the API, the dashboard or the portal, recorded with the change.",
  Operator:
    "For the installation's operator, with `ADMIN_TOKEN`: accounts and how long their events are kept.",
} as const;

export type Tag = keyof typeof TAGS;
