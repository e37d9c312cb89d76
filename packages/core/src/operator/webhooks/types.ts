import type { TaskStepsStatus } from "../../tasks/steps/types.ts";
import type { ErrorDescription } from "../../processing/error-description.ts";
import type { DurationInput } from "../../time/duration.ts";

/**
 * What a webhook can be told about: a task was `enqueued` (since 0.3.0),
 * `completed`, `failed` for good (exhausted or permanent), was `dropped`
 * (could not be processed), was `cancelled` (by `cancelTask()`, since
 * 0.3.0), or reported `progress`.
 * @since 0.2.0
 */
export type WebhookEventType =
  | "enqueued"
  | "completed"
  | "failed"
  | "dropped"
  | "cancelled"
  | "progress";

/**
 * Every {@link WebhookEventType}, in documentation order.
 * @since 0.2.0
 */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.freeze([
  "enqueued",
  "completed",
  "failed",
  "dropped",
  "cancelled",
  "progress",
]);

/**
 * What `Federation.addWebhook()` takes.
 * @since 0.2.0
 */
export interface WebhookInit {
  /**
   * The http(s) URL the events are POSTed to.  Required.  Since 0.4.0 a
   * template: `{taskId}`, `{taskName}`, `{attempt}`, `{event}`, `{eventId}`
   * and `{webhookId}` in the path or the query are filled in per request
   * with the event's values, each URL-encoded (`fedwork:delivery` becomes
   * `fedwork%3Adelivery`), e.g. `https://ops.example/jobs/{taskId}/webhook`.
   * Any other `{name}` is refused, as is a placeholder in the host.
   */
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
  /**
   * Extra request headers, such as an `X-API-Key` the receiver requires: at
   * most 32, names HTTP tokens other than `Content-Type`, `Content-Length`,
   * `Host`, `User-Agent`, `traceparent`, `tracestate` and the
   * `Fedwork-Webhook-*` headers, values up to 4096 characters without line
   * breaks.  Kept in the key–value store beside the secret; never logged,
   * and `listWebhooks()` returns only their names (`headerNames`).
   * @since 0.3.0
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * When a failed request to this webhook is tried again, instead of the
   * federation's `webhooks.retryPolicy`: an exponential back-off (with
   * jitter) from `initialDelay` (1 second by default) up to `maxDelay` (1
   * hour by default), giving up after `maxAttempts` attempts (10 by
   * default).  Plain data, so that every process of the federation applies
   * it.
   * @since 0.3.0
   */
  readonly retryPolicy?: WebhookRetryPolicy;
  /**
   * A static webhook is never disabled, however many requests fail in a
   * row.  `false` by default.
   * @since 0.3.0
   */
  readonly static?: boolean;
  /**
   * Also tell a webhook that receives `failed` events about each outgoing
   * ActivityPub delivery that fails for good (given up, refused for good,
   * or to a host declared dead): such an event has `task.kind` set to
   * `"delivery"`, `task.name` `"fedwork:delivery"`, `task.id` the id of
   * its record in the failed-task store (for `retryFailedTask()`), and
   * `task.delivery` saying where it went.  `tasks` does not filter these.
   * `false` by default.
   * @since 0.3.0
   */
  readonly deliveries?: boolean;
}

/**
 * A webhook's own retry policy (`WebhookInit.retryPolicy`).
 * @since 0.3.0
 */
export interface WebhookRetryPolicy {
  /** How many attempts a request gets in all; a positive integer.  10 by default. */
  readonly maxAttempts?: number;
  /** The delay before the first retry.  1 second by default. */
  readonly initialDelay?: DurationInput;
  /** The longest delay between two attempts.  1 hour by default. */
  readonly maxDelay?: DurationInput;
}

/**
 * A webhook as `addWebhook()` and `listWebhooks()` return it: everything but
 * the secret.
 * @since 0.2.0
 */
export interface Webhook {
  /** The webhook's id. */
  readonly id: string;
  /**
   * Where the events are POSTed: the URL as given, its placeholders (since
   * 0.4.0) written `{name}`.
   */
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
  /**
   * The names of its extra headers; their values are never returned.
   * @since 0.3.0
   */
  readonly headerNames?: readonly string[];
  /**
   * Its own retry policy, when it has one.
   * @since 0.3.0
   */
  readonly retryPolicy?: {
    readonly maxAttempts: number;
    readonly initialDelayMs: number;
    readonly maxDelayMs: number;
  };
  /**
   * Whether it is static (never disabled).
   * @since 0.3.0
   */
  readonly static: boolean;
  /**
   * Whether it also receives the `failed` events of outgoing deliveries.
   * @since 0.3.0
   */
  readonly deliveries: boolean;
  /**
   * When a request to it last succeeded (updated at most once a minute
   * while it keeps succeeding, and at once after a failure).
   * @since 0.3.0
   */
  readonly lastSuccessAt?: Date;
  /**
   * When a request to it last failed.
   * @since 0.3.0
   */
  readonly lastFailureAt?: Date;
  /**
   * While it is disabled: when it is next probed (the request that
   * disabled it is sent again; a success enables it).
   * @since 0.3.0
   */
  readonly nextProbeAt?: Date;
}

/**
 * The task a webhook event is about.
 * @since 0.2.0
 */
export interface WebhookTaskInfo {
  /**
   * `"delivery"` when the event is about an outgoing ActivityPub delivery
   * that failed for good (see `WebhookInit.deliveries`); absent for a
   * task.
   * @since 0.3.0
   */
  readonly kind?: "delivery";
  /** The task's message id (what `enqueueTask()` returned, `ctx.task.id`). */
  readonly id: string;
  /** The task's name. */
  readonly name: string;
  /** The attempt the event is about, from 0. */
  readonly attempt: number;
  /**
   * For `failed`: how many more attempts the retry policy would have
   * allowed; `0` when it gave up (`"exhausted"`, `"timeout"`).  Absent when
   * the policy was not asked (a `"permanent"` failure), since it cannot
   * tell then without being run.
   * @since 0.3.0
   */
  readonly attemptsLeft?: number;
  /** When the task was first enqueued, ISO 8601. */
  readonly enqueuedAt: string;
  /** How long the attempt ran, in milliseconds (not for `progress`). */
  readonly durationMs?: number;
  /**
   * The id of the worker that sent the event (`WorkerInfo.id`): the one
   * that ran the task, or took it off its queue, for `progress`,
   * `completed`, `failed`, `dropped` and `cancelled`; absent from
   * `enqueued` events, failed deliveries and events of Fedwork older than
   * 0.4.0.
   * @since 0.4.0
   */
  readonly workerId?: string;
  /**
   * The id of that worker's machine (`WorkerInfo.machineId`: the
   * `machineId` option, else its host name), whenever `workerId` is there.
   * @since 0.4.0
   */
  readonly machineId?: string;
  /**
   * Why it failed (`"permanent"` or `"exhausted"`), was dropped (in
   * words), or was cancelled (the reason given to `cancelTask()`, if any).
   */
  readonly reason?: string;
  /**
   * For `cancelled`: whether its handler had started (its signal aborted)
   * or it was taken off its queue without running.
   * @since 0.3.0
   */
  readonly started?: boolean;
  /**
   * For a task made of durable steps: the step it was at and the ones
   * recorded, on `completed`, `failed`, `dropped` and `cancelled` events
   * of a run that used steps.
   * @since 0.4.0
   */
  readonly steps?: TaskStepsStatus;
  /**
   * For a failed delivery (`kind: "delivery"`): the inbox, the activity,
   * and the last HTTP status the inbox answered, when it answered.
   * @since 0.3.0
   */
  readonly delivery?: {
    readonly inbox: string;
    readonly sharedInbox: boolean;
    readonly activityId?: string;
    readonly activityType: string;
    readonly statusCode?: number;
  };
  /**
   * The error's name and message, for `failed` and `dropped`: the shape
   * of a task record's and a status record's error, without the stack.
   */
  readonly error?: ErrorDescription;
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
