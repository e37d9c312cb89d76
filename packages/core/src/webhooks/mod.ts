/**
 * Signed webhooks: the payload, the signature headers and the verifier for
 * receivers.
 * @module
 * @since 0.2.0
 */
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
  type WebhookTaskInfo,
} from "./types.ts";
export {
  verifyWebhookRequest,
  type VerifyWebhookRequestOptions,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from "./verify.ts";
export { WebhookDeliveryError } from "./errors.ts";
