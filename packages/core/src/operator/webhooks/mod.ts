/**
 * Signed webhooks: the payload, the signature headers and the verifier for
 * receivers (public), and how the federation runs them: the store behind
 * `addWebhook()` and its siblings, the built-in task that sends each
 * signed request, and the observer that turns task events into requests.
 * @module
 * @since 0.2.0
 */
export {
  FederationWebhooks,
  WEBHOOK_TASK_NAME,
  type WebhookOperations,
  type WebhooksPort,
} from "./webhooks.ts";
export {
  computeWebhookSignature,
  signWebhookRequest,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from "./signature.ts";
export {
  type Webhook,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookInit,
  type WebhookPayload,
  type WebhookRetryPolicy,
  type WebhookTaskInfo,
} from "./types.ts";
export {
  verifyWebhookRequest,
  type VerifyWebhookRequestOptions,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from "./verify.ts";
export { WebhookDeliveryError } from "./errors.ts";
