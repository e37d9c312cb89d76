/**
 * Webhooks as the federation runs them: the store behind `addWebhook()`
 * and its siblings, the built-in task that sends each signed request, and
 * the observer that turns task events into requests.  The signing, the
 * payloads and `verifyWebhookRequest()` live in webhooks/.
 * @module
 * @since 0.2.0
 */
export {
  FederationWebhooks,
  type ResolvedWebhookOptions,
  WEBHOOK_TASK_NAME,
  type WebhookOperations,
  type WebhooksPort,
} from "./webhooks.ts";
