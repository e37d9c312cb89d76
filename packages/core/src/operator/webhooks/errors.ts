import { markRemoteFailureClass } from "../../processing/remote-failure.ts";

/**
 * Thrown (to the retry machinery) when a webhook request failed: the
 * receiver answered other than 2xx, or did not answer.  Its message names
 * the webhook and its URL, never the secret.
 * @since 0.2.0
 */
export class WebhookDeliveryError extends Error {
  /** The webhook's id. */
  readonly webhookId: string;
  /** The receiver's URL. */
  readonly url: string;
  /** The status it answered, or `null` when it did not answer. */
  readonly status: number | null;

  /**
   * @param webhookId The webhook's id.
   * @param url The receiver's URL.
   * @param status The status, or `null`.
   * @param detail What went wrong, in words.
   * @param cause The network error, if any.
   */
  constructor(
    webhookId: string,
    url: string,
    status: number | null,
    detail: string,
    cause?: unknown,
  ) {
    super(
      `The webhook ${webhookId} request to ${url} failed: ${detail}.`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "WebhookDeliveryError";
    this.webhookId = webhookId;
    this.url = url;
    this.status = status;
  }
}

// A remote party's doing, not a bug here: logged without a stack.
markRemoteFailureClass(WebhookDeliveryError);
