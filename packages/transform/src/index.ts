export { type Owner, TransformPool, type TransformPoolOptions } from "./pool.ts";
export { refusal } from "./refusals.ts";
export { FILE_NAME, type SandboxLimits, TransformationError } from "./sandbox.ts";
export {
  METHODS,
  type TransformedRequest,
  type WebhookAttempt,
  type WebhookInput,
  webhookInput,
} from "./webhook.ts";
