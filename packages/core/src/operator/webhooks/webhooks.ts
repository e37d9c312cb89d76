import { rememberedStepsStatus } from "../../tasks/steps/status.ts";
import { getLogger } from "@logtape/logtape";
import type { MessageRunner, MessageRunners } from "../../processing/message-runners.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import type { MessageObserver } from "../../processing/dispatcher.ts";
import type { ObservedAttempt } from "../../processing/observed-attempt.ts";
import type { BaseMessage } from "../../processing/envelope.ts";
import type { MessageEvent, MessageFailedEvent } from "../../processing/events.ts";
import type { TaskDefinition } from "../../tasks/definition.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import { TaskQueueNotConfiguredError } from "../../tasks/errors.ts";
import { taskResultOf } from "../../tasks/result.ts";
import { resolveTaskQueue } from "../../tasks/routing.ts";
import {
  isOutboxMessage,
  webhookPayloadOfEnqueued,
  webhookPayloadOfEvent,
  webhookPayloadOfFailedDelivery,
  webhookPayloadOfProgress,
} from "./payload.ts";
import type { ResolvedWebhookOptions } from "./options.ts";
import { describeSecretProblem } from "./signature.ts";
import { WebhookSender, type WebhookTaskContext, type WebhookTaskData } from "./sender.ts";
import { type StoredWebhook, toWebhook, WebhookStore } from "./store.ts";
import { checkWebhookUrlTemplate } from "./url-template.ts";
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
import { context } from "@opentelemetry/api";
import { injectTraceContext } from "../../processing/tracing.ts";
import { checkWebhookHeaders, checkWebhookRetryPolicy } from "./headers.ts";

const logger = getLogger(["fedwork", "webhook"]);

/**
 * The name of the built-in task that sends one webhook request.
 * @since 0.2.0
 */
export const WEBHOOK_TASK_NAME = `${INTERNAL_TASK_PREFIX}webhook`;

/** The least time between two progress events of one task sent to webhooks. */
const PROGRESS_INTERVAL_MS = 1000;

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
   * other processes notice a change within seconds.  Since 0.4.0 the URL
   * may be a template: `{taskId}`, `{taskName}`, `{attempt}`, `{event}`,
   * `{eventId}` and `{webhookId}` in its path or query are replaced, per
   * request, by that event's value, URL-encoded.
   * @param init The URL, the events, the secret and optionally task names.
   * @returns The webhook, without its secret.
   * @throws {TypeError} When the URL is not http(s), has an unknown
   *         placeholder or one outside its path and query (since 0.4.0), `events` is empty or
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
  /**
   * Which worker of this process runs each message, for the payloads.
   * @since 0.4.0
   */
  readonly runners?: MessageRunners;
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
  readonly #sender: WebhookSender;
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
    this.#sender = new WebhookSender({
      store: this.#store,
      http: port.http,
      enqueueData: (ctx, data, enqueueOptions) => this.#enqueueData(ctx, data, enqueueOptions),
    }, options);
    this.#task = port.internalTasks.tasks.defineTask(WEBHOOK_TASK_NAME, {
      schema: stringRecordSchema(["webhookId", "eventId", "eventType", "body"]),
      handler: (ctx, data) => this.#sender.send(ctx as WebhookTaskContext, data),
      ...(options.retryPolicy == null ? {} : { retryPolicy: options.retryPolicy }),
    }) as TaskDefinition<TContextData, WebhookTaskData, WebhookTaskData>;
    port.observe((attempt) => this.#observe(attempt));
    port.internalTasks.taskEnqueuer.observeEnqueued((messages) => this.#observeEnqueued(messages));
  }

  async addWebhook(init: WebhookInit): Promise<Webhook> {
    if (typeof init !== "object" || init == null) {
      throw new TypeError("addWebhook() needs { url, events, secret }.");
    }
    assertKnownOptions(
      init,
      ["url", "events", "secret", "tasks", "headers", "retryPolicy", "static", "deliveries"],
      { where: "addWebhook()" },
    );
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
    const template = checkWebhookUrlTemplate(url);
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
    const headers = checkWebhookHeaders(init.headers);
    const retryPolicy = checkWebhookRetryPolicy(init.retryPolicy);
    if (init.static != null && typeof init.static !== "boolean") {
      throw new TypeError("The static option of addWebhook() must be a boolean.");
    }
    if (init.deliveries != null && typeof init.deliveries !== "boolean") {
      throw new TypeError("The deliveries option of addWebhook() must be a boolean.");
    }
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
      url: template,
      events: [...new Set(events)],
      ...(init.tasks == null ? {} : { tasks: [...init.tasks] }),
      secret: init.secret,
      ...(headers == null ? {} : { headers }),
      ...(retryPolicy == null ? {} : { retryPolicy }),
      ...(init.static === true ? { static: true } : {}),
      ...(init.deliveries === true ? { deliveries: true } : {}),
      enabled: true,
      consecutiveFailures: 0,
      createdAt: Date.now(),
    };
    await this.#store.add(stored);
    // The header values are secret-like: only their names are logged.
    logger.info("Added the webhook {webhookId} for {events} to {url}.", {
      webhookId: stored.id,
      events: stored.events,
      url: stored.url,
      headerNames: headers == null ? [] : Object.keys(headers),
      static: stored.static === true,
      deliveries: stored.deliveries === true,
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
      const { disabledAt: _, probe: __, ...rest } = current;
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
    // Read now: the run may end while the webhooks are read.
    const runner = this.#port.runners?.of(message.id);
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
      await this.#enqueue(
        webhookPayloadOfProgress(message, progress, webhook.id, runner),
        message.baseUrl,
        traceOf(message),
      );
    }
  }

  // Not async: for most messages there is nothing to send (no webhook is
  // registered, or the event is not one a webhook hears of), and this runs
  // for every message.
  #observe(attempt: ObservedAttempt): Promise<void> | undefined {
    const { message, outcome } = attempt;
    if (outcome.type === "failed" && message.type === "outbox") {
      return this.#observeFailedDelivery(
        attempt.event as MessageFailedEvent,
        message,
        attempt.trace,
      );
    }
    if (message.type !== "task") return;
    // Only when some task reported progress: a lookup hashes the id, whose
    // first hash (of a fresh string) is most of what this costs per task.
    if (this.#progressSentAt.size > 0) this.#progressSentAt.delete(message.id);
    // Only the outcomes a webhook can subscribe to: not "retrying" nor
    // "unhandled" (a task never goes unhandled); a new event kind (such as
    // "cancelled") reaches webhooks by joining WEBHOOK_EVENT_TYPES.
    const type = outcome.type;
    if (!isWebhookEventType(type)) return;
    const taskName = attempt.taskName;
    if (taskName == null || taskName.startsWith(INTERNAL_TASK_PREFIX)) return;
    if (typeof this.#port.kv.list !== "function") return;
    if (this.#store.peekCached()?.length === 0) return;
    // Read now, while the worker still runs it.
    const runner = this.#port.runners?.of(message.id);
    return this.#sendEvent(attempt.event, type, taskName, message, attempt.trace, runner);
  }

  async #sendEvent(
    event: MessageEvent,
    type: WebhookEventType,
    taskName: string,
    message: BaseMessage,
    trace: Readonly<Record<string, string>>,
    runner: MessageRunner | undefined,
  ): Promise<void> {
    const all = this.#store.peekCached() ?? await this.#store.listCached();
    if (all.length === 0) return;
    const webhooks = all.filter((webhook) =>
      webhook.enabled && webhook.events.includes(type) &&
      (webhook.tasks == null || webhook.tasks.includes(taskName))
    );
    for (const webhook of webhooks) {
      await this.#enqueue(
        webhookPayloadOfEvent(
          event,
          webhook.id,
          resultInfo(message),
          runner,
          rememberedStepsStatus(message),
        ),
        message.baseUrl,
        // The task's processing span is the request's parent.
        trace.traceparent == null ? traceOf(message) : trace,
      );
    }
  }

  async #observeFailedDelivery(
    event: MessageFailedEvent,
    message: BaseMessage,
    trace: Readonly<Record<string, string>>,
  ): Promise<void> {
    if (typeof this.#port.kv.list !== "function" || !isOutboxMessage(message)) return;
    let all: StoredWebhook[];
    try {
      all = this.#store.peekCached() ?? await this.#store.listCached();
    } catch (error) {
      logger.warn("Could not read the webhooks: {error}", { error });
      return;
    }
    for (const webhook of all) {
      if (!webhook.enabled || webhook.deliveries !== true || !webhook.events.includes("failed")) {
        continue;
      }
      await this.#enqueue(
        webhookPayloadOfFailedDelivery(event, message, webhook.id),
        message.baseUrl,
        trace.traceparent == null ? traceOf(message) : trace,
      );
    }
  }

  async #observeEnqueued(messages: readonly TaskMessage[]): Promise<void> {
    if (typeof this.#port.kv.list !== "function") return;
    const tasks = messages.filter((message) => !message.taskName.startsWith(INTERNAL_TASK_PREFIX));
    if (tasks.length === 0) return;
    let all: StoredWebhook[];
    try {
      all = this.#store.peekCached() ?? await this.#store.listCached();
    } catch (error) {
      logger.warn("Could not read the webhooks: {error}", { error });
      return;
    }
    if (all.length === 0) return;
    for (const message of tasks) {
      for (const webhook of all) {
        if (
          !webhook.enabled || !webhook.events.includes("enqueued") ||
          (webhook.tasks != null && !webhook.tasks.includes(message.taskName))
        ) continue;
        await this.#enqueue(
          webhookPayloadOfEnqueued(message, webhook.id),
          message.baseUrl,
          traceOf(message),
        );
      }
    }
  }

  async #enqueue(
    payload: WebhookPayload,
    baseUrl: string,
    trace: Readonly<Record<string, string>>,
  ): Promise<void> {
    try {
      await enqueueInternalTask(this.#port.internalTasks, this.#task, {
        webhookId: payload.webhookId,
        eventId: payload.id,
        eventType: payload.type,
        body: JSON.stringify(payload),
        ...(trace.traceparent == null ? {} : { traceparent: trace.traceparent }),
        ...(trace.tracestate == null ? {} : { tracestate: trace.tracestate }),
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

  async #enqueueData(
    ctx: WebhookTaskContext,
    data: WebhookTaskData,
    options: { readonly delayMs: number },
  ): Promise<void> {
    try {
      await enqueueInternalTask(this.#port.internalTasks, this.#task, data, {
        baseUrl: ctx.origin,
        delay: { milliseconds: options.delayMs },
      });
    } catch (error) {
      logger.error(
        "Could not enqueue the next request of the event {eventId} for the webhook " +
          "{webhookId}: {error}",
        { eventId: data.eventId, webhookId: data.webhookId, error },
      );
    }
  }
}

/**
 * The trace context of the task an event is about: the one its message
 * carries, else (a message not yet stamped, for `enqueued`) the active
 * span's, when the application installed a context manager.
 */
function traceOf(message: { readonly traceContext?: Readonly<Record<string, string>> }) {
  const carried = message.traceContext;
  if (carried?.traceparent != null) return carried;
  return injectTraceContext(context.active());
}

/** Whether an event type is one webhooks can subscribe to. */
function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** The checked result of a completed task message, as the payload has it. */
function resultInfo(message: BaseMessage): Pick<WebhookTaskInfo, "result" | "resultOmitted"> {
  const checked = taskResultOf(message);
  if (checked == null) return {};
  return checked.omitted == null ? { result: checked.result } : { resultOmitted: checked.omitted };
}
