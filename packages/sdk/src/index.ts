/**
 * @herald/sdk: the typed client for Herald's HTTP API, and `verifyWebhook` for receivers.
 *
 *   const herald = new Herald({ apiKey, baseUrl });
 *   await herald.events.send({ app: "acme", type: "invoice.paid", data: { id: "in_1" } });
 *   for await (const attempt of herald.attempts.list({ endpoint })) console.log(attempt.status);
 */
export { type ResponseInfo, responseOf } from "./client.ts";
export * from "./errors.ts";
export type * from "./generated/openapi.ts";
export { operations } from "./generated/openapi.ts";
export { Herald } from "./herald.ts";
export { sdkMethods, uncoveredOperations } from "./operations.ts";
export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type HeraldOptions,
  type RequestOptions,
} from "./options.ts";
export { type Page, PageIterator, type PageQuery } from "./paging.ts";
export { VERSION } from "./version.ts";
export * from "./webhooks.ts";
