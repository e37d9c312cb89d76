import { getLogger } from "@logtape/logtape";
import { PrivateAddressError } from "../../activitypub/network/errors.ts";
import { fetchRemote } from "../../activitypub/network/outgoing-http.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import type { MessageObserver } from "../../processing/dispatcher.ts";
import type { BaseMessage } from "../../processing/envelope.ts";
import { PermanentError } from "../../processing/errors.ts";
import type { MessageEvent } from "../../processing/events.ts";
import type { TaskDefinition } from "../../tasks/definition.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import { TaskQueueNotConfiguredError } from "../../tasks/errors.ts";
import { taskResultOf } from "../../tasks/result.ts";
import { resolveTaskQueue } from "../../tasks/routing.ts";
import { WebhookDeliveryError } from "./errors.ts";
import { webhookPayloadOfEvent, webhookPayloadOfProgress } from "./payload.ts";
import { describeSecretProblem, signWebhookRequest } from "./signature.ts";
import { type StoredWebhook, toWebhook, WebhookStore } from "./store.ts";
import {
  type Webhook,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
  type WebhookInit,
  type WebhookPayload,
  type WebhookTaskInfo,
} from "./types.ts";
import {
  enqueueInternalTask,
  INTERNAL_TASK_PREFIX,
  type InternalTaskPort,
  stringRecordSchema,
} from "../internal-tasks/mod.ts";
import type { RetryPolicy } from "../../retry/retry-policy.ts";

const logger = getLogger(["fedwork", "webhook"]);

/**
 * The name of the built-in task that sends one webhook request.
 * @since 0.2.0
 */
export const WEBHOOK_TASK_NAME = `${INTERNAL_TASK_PREFIX}webhook`;

/** The least time between two progress events of one task sent to webhooks. */
const PROGRESS_INTERVAL_MS = 1000;

type WebhookTaskData = Record<"webhookId" | "eventId" | "eventType" | "body", string>;

/**
 * Managing webhooks from the federation.  `Federation` has these methods.
 * @since 0.2.0
 */
export interface WebhookOperations {
  /**
   * Adds a webhook: from now on, each `completed`, `failed` (for good) or
   * `dropped` event of a task (only of the named `tasks`, when given; never
   * of Fedwork's own `fedwork:` tasks) is POSTed to `url` as JSON, signed
   * with HMAC-SHA256 over `"<id>.<timestamp>.<event type>.<body>"`
   * (headers `Fedwork-Webhook-Id`, `Fedwork-Webhook-Timestamp`,
   * `Fedwork-Webhook-Event`, `Fedwork-Webhook-Signature: v2=<hex>`), by the
   * built-in task `fedwork:webhook`, so failed requests are retried and
   * land in the failed-task store.  After `webhooks.disableAfterFailures` failed
   * requests in a row (10 by default) the webhook is disabled.  Stored in
   * the key–value store, so every process of the federation sends it;
   * other processes notice a change within seconds.
   * @param init The URL, the events, the secret and optionally task names.
   * @returns The webhook, without its secret.
   * @throws {TypeError} When the URL is not http(s), `events` is empty or
   *         names an unknown event, `tasks` is not an array of names, the
   *         secret is shorter than 16 or longer than 1024 characters, or
   *         the key–value store has no `list()`.
   * @throws {UnknownOptionError} When `init` holds a name it does not know
   *         (such as `headers` or `filters`; since 0.3.0), suggesting the
   *         nearest one.
   * @throws {TaskQueueNotConfiguredError} When no queue can carry the
   *         webhook task.
   * @example
   * ```ts
   * const webhook = await federation.addWebhook({
   *   url: "https://ops.example.com/hooks/fedwork",
   *   events: ["failed", "dropped"],
   *   secret: Deno.env.get("FEDWORK_WEBHOOK_SECRET")!,
   * });
   * console.log(webhook.id, webhook.enabled);
   * ```
   * @since 0.2.0
   */
  addWebhook(init: WebhookInit): Promise<Webhook>;
  /**
   * Lists the webhooks, oldest first, without their secrets.
   * @returns The webhooks.
   * @since 0.2.0
   */
  listWebhooks(): Promise<Webhook[]>;
  /**
   * Removes a webhook; requests already queued for it are not sent.
   * @param id The webhook's id.
   * @returns Whether there was one.
   * @since 0.2.0
   */
  removeWebhook(id: string): Promise<boolean>;
  /**
   * Enables a (disabled) webhook again and resets its failure count.
   * @param id The webhook's id.
   * @returns The webhook, or `undefined` when there is none.
   * @since 0.2.0
   */
  enableWebhook(id: string): Promise<Webhook | undefined>;
}

/**
 * The federation's `webhooks` option checked, with defaults.  Internal.
 * @since 0.2.0
 */
export interface ResolvedWebhookOptions {
  readonly disableAfterFailures: number;
  readonly onDisabled?: (webhook: Webhook) => void | Promise<void>;
  readonly timeoutMs: number;
  readonly retryPolicy?: RetryPolicy;
}

/**
 * What {@link FederationWebhooks} needs from the federation.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface WebhooksPort<TContextData> {
  /** Where webhooks are stored; needs `list()`. */
  readonly kv: KvStore;
  /** Defines and enqueues the built-in task that sends each request. */
  readonly internalTasks: InternalTaskPort<TContextData>;
  /** Subscribes to the dispatcher's lifecycle events. */
  readonly observe: (observer: MessageObserver) => unknown;
  /** How requests leave: the federation's outgoing-HTTP settings. */
  readonly http: {
    readonly userAgent: string;
    readonly allowPrivateAddress: boolean;
    readonly maxRedirects: number;
  };
}

/** What the webhook task's handler reads of its context. */
interface WebhookTaskContext {
  readonly task: { readonly signal: AbortSignal };
}

/**
 * The federation's webhooks: the store, the built-in task that sends each
 * request, and the dispatcher observer that turns task events into
 * requests.  Internal.
 * @since 0.2.0
 */
export class FederationWebhooks<TContextData> implements WebhookOperations {
  readonly #port: WebhooksPort<TContextData>;
  readonly #options: ResolvedWebhookOptions;
  readonly #store: WebhookStore;
  readonly #task: TaskDefinition<TContextData, WebhookTaskData, WebhookTaskData>;
  /** When a progress event of each running task was last sent, by message id. */
  readonly #progressSentAt = new Map<string, number>();

  /**
   * @param port What webhooks need from the federation.
   * @param options The resolved `webhooks` option.
   */
  constructor(port: WebhooksPort<TContextData>, options: ResolvedWebhookOptions) {
    this.#port = port;
    this.#options = options;
    this.#store = new WebhookStore(port.kv);
    this.#task = port.internalTasks.tasks.defineTask(WEBHOOK_TASK_NAME, {
      schema: stringRecordSchema(["webhookId", "eventId", "eventType", "body"]),
      handler: (ctx, data) => this.#send(ctx as WebhookTaskContext, data),
      ...(options.retryPolicy == null ? {} : { retryPolicy: options.retryPolicy }),
    }) as TaskDefinition<TContextData, WebhookTaskData, WebhookTaskData>;
    port.observe((event, message) => this.#observe(event, message));
  }

  async addWebhook(init: WebhookInit): Promise<Webhook> {
    if (typeof init !== "object" || init == null) {
      throw new TypeError("addWebhook() needs { url, events, secret }.");
    }
    assertKnownOptions(init, ["url", "events", "secret", "tasks"], { where: "addWebhook()" });
    const url = typeof init.url === "string" && URL.canParse(init.url)
      ? new URL(init.url)
      : init.url instanceof URL
      ? init.url
      : undefined;
    if (url == null || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new TypeError("The url of addWebhook() must be an http(s) URL.");
    }
    if (url.username !== "" || url.password !== "") {
      // Credentials in the URL would show up in logs and listWebhooks().
      throw new TypeError(
        "The url of addWebhook() must not contain credentials; the receiver authenticates " +
          "requests by their signature.",
      );
    }
    const events = init.events;
    if (!Array.isArray(events) || events.length === 0) {
      throw new TypeError(
        `The events of addWebhook() must be a non-empty array of ${
          WEBHOOK_EVENT_TYPES.join(", ")
        }.`,
      );
    }
    for (const event of events) {
      if (!WEBHOOK_EVENT_TYPES.includes(event)) {
        throw new TypeError(
          `Unknown webhook event ${JSON.stringify(event)}; the events are ` +
            `${WEBHOOK_EVENT_TYPES.join(", ")}.`,
        );
      }
    }
    if (
      init.tasks != null &&
      (!Array.isArray(init.tasks) ||
        init.tasks.some((name) => typeof name !== "string" || name === ""))
    ) {
      throw new TypeError("The tasks of addWebhook() must be an array of task names.");
    }
    const problem = describeSecretProblem(init.secret);
    if (problem != null) throw new TypeError(`The secret of addWebhook() ${problem}.`);
    const { kv } = this.#port;
    if (typeof kv.list !== "function") {
      throw new TypeError(
        "Webhooks need a KvStore with list(): they are stored there and read by every worker.",
      );
    }
    // Fails now rather than at the first event.
    resolveTaskQueue({ name: WEBHOOK_TASK_NAME }, this.#port.internalTasks.routing);
    const stored: StoredWebhook = {
      id: crypto.randomUUID(),
      url: url.href,
      events: [...new Set(events)],
      ...(init.tasks == null ? {} : { tasks: [...init.tasks] }),
      secret: init.secret,
      enabled: true,
      consecutiveFailures: 0,
      createdAt: Date.now(),
    };
    await this.#store.add(stored);
    logger.info("Added the webhook {webhookId} for {events} to {url}.", {
      webhookId: stored.id,
      events: stored.events,
      url: stored.url,
    });
    return toWebhook(stored);
  }

  async listWebhooks(): Promise<Webhook[]> {
    if (typeof this.#port.kv.list !== "function") return [];
    return (await this.#store.list()).map(toWebhook);
  }

  removeWebhook(id: string): Promise<boolean> {
    return this.#store.remove(String(id));
  }

  async enableWebhook(id: string): Promise<Webhook | undefined> {
    const updated = await this.#store.update(String(id), (current) => {
      const { disabledAt: _, ...rest } = current;
      return { ...rest, enabled: true, consecutiveFailures: 0 };
    });
    return updated == null ? undefined : toWebhook(updated);
  }

  /**
   * Sends a task's progress report to the webhooks that want it, at most
   * one a second per task (a report of 100 % always goes).  Failures to
   * enqueue are logged, never thrown to the handler.
   * @param message The running task's message.
   * @param progress The checked report.
   */
  async progress(
    message: TaskMessage,
    progress: { readonly percent?: number; readonly data?: unknown },
  ): Promise<void> {
    const taskName = message.taskName;
    if (taskName.startsWith(INTERNAL_TASK_PREFIX)) return;
    if (typeof this.#port.kv.list !== "function") return;
    const now = Date.now();
    const last = this.#progressSentAt.get(message.id);
    if (last != null && now - last < PROGRESS_INTERVAL_MS && progress.percent !== 100) return;
    let webhooks: StoredWebhook[];
    try {
      webhooks = (this.#store.peekCached() ?? await this.#store.listCached()).filter((webhook) =>
        webhook.enabled && webhook.events.includes("progress") &&
        (webhook.tasks == null || webhook.tasks.includes(taskName))
      );
    } catch (error) {
      logger.warn("Could not read the webhooks: {error}", { error });
      return;
    }
    if (webhooks.length === 0) return;
    this.#progressSentAt.set(message.id, now);
    for (const webhook of webhooks) {
      await this.#enqueue(webhookPayloadOfProgress(message, progress, webhook.id), message.baseUrl);
    }
  }

  async #observe(event: MessageEvent, message: BaseMessage): Promise<void> {
    if (event.kind !== "task") return;
    this.#progressSentAt.delete(event.messageId);
    // A task never goes unhandled; the check is for the type.
    if (event.type === "retrying" || event.type === "unhandled") return;
    const taskName = event.taskName;
    if (taskName == null || taskName.startsWith(INTERNAL_TASK_PREFIX)) return;
    if (typeof this.#port.kv.list !== "function") return;
    const type: WebhookEventType = event.type;
    const all = this.#store.peekCached() ?? await this.#store.listCached();
    if (all.length === 0) return;
    const webhooks = all.filter((webhook) =>
      webhook.enabled && webhook.events.includes(type) &&
      (webhook.tasks == null || webhook.tasks.includes(taskName))
    );
    for (const webhook of webhooks) {
      await this.#enqueue(
        webhookPayloadOfEvent(event, webhook.id, resultInfo(message)),
        message.baseUrl,
      );
    }
  }

  async #enqueue(payload: WebhookPayload, baseUrl: string): Promise<void> {
    try {
      await enqueueInternalTask(this.#port.internalTasks, this.#task, {
        webhookId: payload.webhookId,
        eventId: payload.id,
        eventType: payload.type,
        body: JSON.stringify(payload),
      }, { baseUrl });
    } catch (error) {
      const level = error instanceof TaskQueueNotConfiguredError ? "error" : "warn";
      logger[level](
        "Could not enqueue the {eventType} event {eventId} for the webhook " +
          "{webhookId}: {error}",
        {
          eventType: payload.type,
          eventId: payload.id,
          webhookId: payload.webhookId,
          error,
        },
      );
    }
  }

  async #send(ctx: WebhookTaskContext, data: WebhookTaskData): Promise<void> {
    const webhook = await this.#store.get(data.webhookId);
    if (webhook == null || !webhook.enabled) {
      logger.info("Skipped the event {eventId}: the webhook {webhookId} is {state}.", {
        eventId: data.eventId,
        webhookId: data.webhookId,
        state: webhook == null ? "removed" : "disabled",
      });
      return;
    }
    const url = new URL(webhook.url);
    const { allowPrivateAddress, userAgent, maxRedirects } = this.#port.http;
    let failure: WebhookDeliveryError;
    let permanent = false;
    try {
      const headers = await signWebhookRequest({
        secret: webhook.secret,
        eventId: data.eventId,
        eventType: data.eventType,
        body: data.body,
      });
      const response = await fetchRemote(url, {
        method: "POST",
        headers,
        body: data.body,
        userAgent,
        allowPrivateAddress,
        // Redirects are not followed: a webhook URL is configured exactly.
        redirect: "error",
        timeout: { milliseconds: this.#options.timeoutMs },
        // The receiver's answer is not used: nothing of it is read.
        maxBodyBytes: 0,
        oversizedBody: "truncate",
        maxRedirects,
        signal: ctx.task.signal,
      });
      if (response.status >= 200 && response.status < 300) {
        if (webhook.consecutiveFailures > 0) {
          await this.#store.update(
            webhook.id,
            (current) =>
              current.consecutiveFailures === 0
                ? undefined
                : { ...current, consecutiveFailures: 0 },
          );
        }
        logger.debug("Sent the event {eventId} to the webhook {webhookId} (HTTP {status}).", {
          eventId: data.eventId,
          webhookId: webhook.id,
          status: response.status,
        });
        return;
      }
      failure = new WebhookDeliveryError(
        webhook.id,
        webhook.url,
        response.status,
        `HTTP ${response.status}`,
      );
    } catch (error) {
      permanent = error instanceof PrivateAddressError;
      failure = new WebhookDeliveryError(
        webhook.id,
        webhook.url,
        null,
        error instanceof Error ? error.message : String(error),
        error,
      );
    }
    const threshold = this.#options.disableAfterFailures;
    let disabledNow = false;
    const updated = await this.#store.update(webhook.id, (current) => {
      const consecutiveFailures = current.consecutiveFailures + 1;
      const disable = current.enabled && consecutiveFailures >= threshold;
      disabledNow = disable;
      return {
        ...current,
        consecutiveFailures,
        lastError: failure.status == null ? failure.message : `HTTP ${failure.status}`,
        ...(disable ? { enabled: false, disabledAt: Date.now() } : {}),
      };
    });
    if (disabledNow && updated != null) {
      logger.warn(
        "Disabled the webhook {webhookId} ({url}) after {failures} failed requests in a row.",
        { webhookId: webhook.id, url: webhook.url, failures: updated.consecutiveFailures },
      );
      try {
        await this.#options.onDisabled?.(toWebhook(updated));
      } catch (error) {
        logger.error("The webhooks.onDisabled callback threw: {error}", { error });
      }
    }
    if (permanent || (updated != null && !updated.enabled)) {
      throw new PermanentError(failure.message, { cause: failure });
    }
    throw failure;
  }
}

/** The checked result of a completed task message, as the payload has it. */
function resultInfo(message: BaseMessage): Pick<WebhookTaskInfo, "result" | "resultOmitted"> {
  const checked = taskResultOf(message);
  if (checked == null) return {};
  return checked.omitted == null ? { result: checked.result } : { resultOmitted: checked.omitted };
}
