/**
 * What a webhook can be told about: a task `completed`, `failed` for good
 * (exhausted or permanent), was `dropped` (could not be processed), or
 * reported `progress`.
 * @since 0.2.0
 */
export type WebhookEventType = "completed" | "failed" | "dropped" | "progress";

/**
 * Every {@link WebhookEventType}, in documentation order.
 * @since 0.2.0
 */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.freeze([
  "completed",
  "failed",
  "dropped",
  "progress",
]);

/**
 * What `Federation.addWebhook()` takes.
 * @since 0.2.0
 */
export interface WebhookInit {
  /** The http(s) URL the events are POSTed to.  Required. */
  readonly url: string | URL;
  /** The events to send; at least one.  Required. */
  readonly events: readonly WebhookEventType[];
  /**
   * The shared secret the requests are signed with (HMAC-SHA256), from 16
   * to 1024 characters; 32 random bytes in base64 or hex is a good choice.
   * Stored in the key–value store; never returned, never logged.  Required.
   */
  readonly secret: string;
  /** Only events of these task names; every task by default. */
  readonly tasks?: readonly string[];
}

/**
 * A webhook as `addWebhook()` and `listWebhooks()` return it: everything but
 * the secret.
 * @since 0.2.0
 */
export interface Webhook {
  /** The webhook's id. */
  readonly id: string;
  /** Where the events are POSTed. */
  readonly url: string;
  /** The events it receives. */
  readonly events: readonly WebhookEventType[];
  /** Only events of these task names, when set. */
  readonly tasks?: readonly string[];
  /**
   * `false` once it failed `disableAfterFailures` times in a row; nothing
   * is sent to it then until `enableWebhook()`.
   */
  readonly enabled: boolean;
  /** Failed requests since the last successful one. */
  readonly consecutiveFailures: number;
  /** When it was added. */
  readonly createdAt: Date;
  /** When it was disabled, if it is. */
  readonly disabledAt?: Date;
  /** Why the last request failed (a status or an error message), if one did. */
  readonly lastError?: string;
}

/**
 * The task a webhook event is about.
 * @since 0.2.0
 */
export interface WebhookTaskInfo {
  /** The task's message id (what `enqueueTask()` returned, `ctx.task.id`). */
  readonly id: string;
  /** The task's name. */
  readonly name: string;
  /** The attempt the event is about, from 0. */
  readonly attempt: number;
  /** When the task was first enqueued, ISO 8601. */
  readonly enqueuedAt: string;
  /** How long the attempt ran, in milliseconds (not for `progress`). */
  readonly durationMs?: number;
  /**
   * Why it failed (`"permanent"` or `"exhausted"`) or was dropped (in
   * words).
   */
  readonly reason?: string;
  /** The error's name and message, for `failed` and `dropped`. */
  readonly error?: { readonly name: string; readonly message: string };
  /** The progress reported, for `progress`. */
  readonly progress?: { readonly percent?: number; readonly data?: unknown };
  /**
   * What the handler returned, for `completed` (absent when it returned
   * nothing or its result was not kept).
   * @since 0.3.0
   */
  readonly result?: unknown;
  /**
   * Why the handler's result was not kept, for `completed`: `reason` is
   * `"too-large"` or `"not-json"`, `message` says more, `limit` is the
   * task's `maxResultBytes` and `bytes` the result's size when too large.
   * @since 0.3.0
   */
  readonly resultOmitted?: {
    readonly reason: "too-large" | "not-json";
    readonly message: string;
    readonly bytes?: number;
    readonly limit: number;
  };
}

/**
 * The JSON body of every webhook request.  The body is signed as sent; see
 * `verifyWebhookRequest()`.
 * @since 0.2.0
 */
export interface WebhookPayload {
  /**
   * The event's id, also in the `Fedwork-Webhook-Id` header: the same on
   * every retry of this event, so receivers can skip duplicates.
   */
  readonly id: string;
  /** What happened. */
  readonly type: WebhookEventType;
  /** When it happened, ISO 8601. */
  readonly createdAt: string;
  /** The webhook this was sent to. */
  readonly webhookId: string;
  /** The task it happened to. */
  readonly task: WebhookTaskInfo;
}
