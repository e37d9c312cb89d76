import type { Activity, Recipient } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { SpanKind, type Tracer } from "@opentelemetry/api";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { type Context, type ContextHost, ContextImpl } from "./context.ts";
import { deliverOutboxMessage, expandFanoutMessage } from "./delivery.ts";
import { type Federatable, FederatableImpl } from "./federatable.ts";
import { handleInboxMessage } from "./inbox.ts";
import type { FanoutMessage, InboxMessage, Message, OutboxMessage } from "./message.ts";
import {
  type FederationOptions,
  type ResolvedFederationOptions,
  resolveFederationOptions,
} from "./options.ts";
import { groupRolesByQueue, QUEUE_ROLES, type QueueRole } from "./queue-roles.ts";
import { createRegistry, type FederationRegistry } from "./registry.ts";
import { sendActivity, type SendActivityOptions, type SenderIdentity } from "./send-activity.ts";
import { getFedworkTracer, traceContextOf, withSpan } from "./tracing.ts";
import { MessageWorker } from "./worker.ts";
import type { TaskMessage } from "../tasks/message.ts";
import { resolveTaskQueue } from "../tasks/routing.ts";
import { isTaskMessage, processTaskMessage } from "../tasks/worker.ts";

const logger = getLogger(["fedwork", "federation"]);

/**
 * Options for {@link Federation.startQueue}.
 * @since 0.1.0
 */
export interface FederationStartQueueOptions {
  /** Stops the workers; `startQueue()` resolves once they have stopped. */
  readonly signal?: AbortSignal;
  /**
   * Start only the worker for this role.  All roles by default.  `"task"`
   * also listens to the queues tasks declared with
   * `defineTask(name, { queue })`.  A queue shared with other roles is
   * listened to once and its messages of every type are processed, so no
   * message is left unhandled.
   */
  readonly queue?: QueueRole;
}

/**
 * An ActivityPub federation: registrations (from {@link Federatable}), the
 * contexts that build URIs and send activities, and the queue workers.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @since 0.1.0
 */
export interface Federation<TContextData> extends Federatable<TContextData> {
  /**
   * Creates a context for a base URL or an incoming request.
   * @param baseUrlOrRequest The server's base URL or the request.
   * @param contextData The application data.
   * @returns The context.
   * @example
   * ```ts
   * const ctx = federation.createContext(new URL("https://example.com/"), { db });
   * ctx.getActorUri("alice"); // https://example.com/users/alice
   * ```
   */
  createContext(baseUrlOrRequest: URL | Request, contextData: TContextData): Context<TContextData>;

  /**
   * Starts the queue workers and resolves when they stop (after
   * `options.signal` aborts).  Needed with `manuallyStartQueue: true`,
   * typically in a separate worker process.
   * @param contextData The application data of the workers' contexts.
   * @param options The abort signal and the role to start.
   * @returns Resolves when every started worker has stopped.
   * @throws {TypeError} When `options.queue` is not a queue role.
   */
  startQueue(contextData: TContextData, options?: FederationStartQueueOptions): Promise<void>;

  /**
   * Processes one queue message as a worker would, retrying on failure.
   * For queue adapters that deliver messages themselves (e.g. push-based
   * platforms).
   * @param contextData The application data.
   * @param message The message, as it was enqueued.
   */
  processQueuedMessage(contextData: TContextData, message: Message): Promise<void>;
}

/**
 * The {@link Federation} implementation.  Internal: use
 * {@link createFederation} or a builder.
 * @since 0.1.0
 */
export class FederationImpl<TContextData> extends FederatableImpl<TContextData>
  implements Federation<TContextData>, ContextHost<TContextData> {
  readonly options: ResolvedFederationOptions;
  /** Dispatches messages to the handler of their type.  Internal. */
  readonly worker: MessageWorker<TContextData>;
  readonly #tracer: Tracer;
  readonly #listening = new Set<MessageQueue>();
  #autoStarted = false;

  /**
   * @param options The federation options.
   * @param registry The registrations (a copy, when built from a builder).
   */
  constructor(
    options: FederationOptions<TContextData>,
    registry: FederationRegistry<TContextData> = createRegistry(),
  ) {
    super(registry);
    this.options = resolveFederationOptions(options);
    this.#tracer = getFedworkTracer(this.options.tracerProvider);
    this.worker = new MessageWorker(this.#tracer);
    const queues = this.options.queues;
    this.worker.register("outbox", {
      handle: (message) => deliverOutboxMessage(message as OutboxMessage, this.options),
      retryPolicy: () => this.options.outboxRetryPolicy,
      queue: () => queues.outbox,
    });
    this.worker.register("fanout", {
      handle: (message, contextData) =>
        this.deliverOrEnqueue(expandFanoutMessage(message as FanoutMessage), contextData),
      retryPolicy: () => this.options.outboxRetryPolicy,
      queue: () => queues.fanout,
    });
    this.worker.register("inbox", {
      handle: (message, contextData) =>
        handleInboxMessage(
          message as InboxMessage,
          this.createContext(new URL(message.baseUrl), contextData),
          this.registry,
          this.options.documentLoader,
        ),
      retryPolicy: () => this.options.inboxRetryPolicy,
      queue: () => queues.inbox,
    });
    this.worker.register("task", {
      handle: (message, contextData, queue) =>
        this.#processTaskMessage(message as TaskMessage, contextData, queue),
      // Only reached when the task ran without a queue to retry into
      // (processQueuedMessage() with no queue configured for the task): the
      // worker then logs that it gave up.
      retryPolicy: (message) =>
        this.registry.tasks.get((message as TaskMessage).taskName)?.retryPolicy ??
          this.options.taskRetryPolicy,
      queue: (message) => this.#taskQueueOf(message as TaskMessage),
    });
  }

  /**
   * Runs a task message.  processTaskMessage() applies the task's retry
   * policy itself (re-enqueueing into `queue`), so this returns normally
   * except to rethrow the handler's error to a queue with `nativeRetrial`;
   * the worker's own retry never applies on top of it.
   */
  async #processTaskMessage(
    message: TaskMessage,
    contextData: TContextData,
    queue: MessageQueue | undefined,
  ): Promise<void> {
    // Without a queue there is nowhere to re-enqueue: let the error reach
    // the worker, whose retry finds no queue either and gives up.
    const source = queue ?? NO_RETRY_QUEUE;
    try {
      await processTaskMessage(message, {
        registry: this.registry.tasks,
        queue: source,
        documentLoader: this.options.documentLoader,
        retryPolicy: this.options.taskRetryPolicy,
        createContext: (baseUrl) => this.createContext(baseUrl, contextData),
      });
    } catch (error) {
      if (source.nativeRetrial) throw error;
      // Re-enqueueing the retry failed; retrying that again here would
      // apply the retry policy twice.
      logger.error(
        "Gave up on task message {messageId} ({taskName}): {error}",
        {
          messageId: message.id,
          taskName: isTaskMessage(message) ? message.taskName : undefined,
          error,
        },
      );
    }
  }

  #taskQueueOf(message: TaskMessage): MessageQueue | undefined {
    const task = this.registry.tasks.get(message?.taskName);
    if (task == null) return undefined;
    try {
      return resolveTaskQueue(task, {
        taskQueue: this.options.queues.task,
        outboxQueue: this.options.queues.outbox,
        resolution: this.options.taskQueueResolution,
      });
    } catch {
      return undefined;
    }
  }

  get federation(): Federation<TContextData> {
    return this;
  }

  get canonicalOrigin(): string | undefined {
    return this.options.origin;
  }

  get documentLoader(): ResolvedFederationOptions["documentLoader"] {
    return this.options.documentLoader;
  }

  get tracerProvider(): ResolvedFederationOptions["tracerProvider"] {
    return this.options.tracerProvider;
  }

  createContext(baseUrlOrRequest: URL | Request, contextData: TContextData): Context<TContextData> {
    let url: URL;
    if (baseUrlOrRequest instanceof URL) url = baseUrlOrRequest;
    else if (typeof Request !== "undefined" && baseUrlOrRequest instanceof Request) {
      url = new URL(baseUrlOrRequest.url);
    } else {
      throw new TypeError("createContext() needs a base URL (a URL object) or a Request.");
    }
    return new ContextImpl(this, url, contextData);
  }

  /**
   * The queues to listen to for the given roles, each with the roles it
   * serves.  Internal.  With the `"task"` role, the queues tasks declared
   * with `defineTask(name, { queue })` are included under `"task"`.
   * @param roles The roles.
   * @returns The queues.
   */
  queuesForRoles(roles: readonly QueueRole[]): Map<MessageQueue, QueueRole[]> {
    const groups = groupRolesByQueue(this.options.queues, roles);
    if (!roles.includes("task")) return groups;
    const tasks = this.registry.tasks;
    for (const name of tasks.names) {
      const queue = tasks.get(name)?.queue;
      if (queue == null) continue;
      const group = groups.get(queue);
      if (group == null) groups.set(queue, ["task"]);
      else if (!group.includes("task")) group.push("task");
    }
    return groups;
  }

  async startQueue(
    contextData: TContextData,
    options: FederationStartQueueOptions = {},
  ): Promise<void> {
    if (options.queue != null && !QUEUE_ROLES.includes(options.queue)) {
      throw new TypeError(
        `The queue option of startQueue() must be one of ${QUEUE_ROLES.join(", ")}; got ${
          JSON.stringify(options.queue)
        }.`,
      );
    }
    const roles = options.queue == null ? QUEUE_ROLES : [options.queue];
    const listeners: Promise<void>[] = [];
    for (const [queue, queueRoles] of this.queuesForRoles(roles)) {
      // One listener per queue object, however many roles it serves and
      // however often startQueue() is called.
      if (this.#listening.has(queue)) continue;
      this.#listening.add(queue);
      logger.info("Starting the worker for the {roles} queue.", { roles: queueRoles });
      listeners.push(
        this.worker.listen(queue, contextData, options.signal).finally(() => {
          this.#listening.delete(queue);
          logger.info("Stopped the worker for the {roles} queue.", { roles: queueRoles });
        }),
      );
    }
    await Promise.all(listeners);
  }

  processQueuedMessage(contextData: TContextData, message: Message): Promise<void> {
    return this.worker.process(message, contextData);
  }

  async enqueue(
    queue: MessageQueue,
    messages: readonly Message[],
    contextData: TContextData,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    if (messages.length === 0) return;
    if (!this.options.manuallyStartQueue && !this.#autoStarted) {
      this.#autoStarted = true;
      this.startQueue(contextData).catch((error) => {
        logger.error("A queue worker stopped with an error: {error}", { error });
      });
    }
    await withSpan(
      this.#tracer,
      "fedwork.queue.enqueue",
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          "fedwork.message.type": messages[0].type,
          "fedwork.message.count": messages.length,
        },
      },
      async (span) => {
        const traceContext = traceContextOf(span);
        const stamped = messages.map((message) => ({ ...message, traceContext }));
        if (stamped.length === 1) await queue.enqueue(stamped[0], options);
        else if (queue.enqueueMany != null) await queue.enqueueMany(stamped, options);
        else await Promise.all(stamped.map((message) => queue.enqueue(message, options)));
        logger.debug("Enqueued {count} {messageType} messages.", {
          count: stamped.length,
          messageType: messages[0].type,
          messageIds: stamped.map((message) => message.id),
        });
      },
    );
  }

  /**
   * Enqueues deliveries into the outbox queue or, without one, delivers
   * them now.  Internal.
   * @param messages The deliveries.
   * @param contextData The context data, for starting workers.
   * @throws {AggregateError} When delivering now and some deliveries fail.
   */
  async deliverOrEnqueue(messages: OutboxMessage[], contextData: TContextData): Promise<void> {
    const queue = this.options.queues.outbox;
    const orderingKey = messages[0]?.orderingKey;
    if (queue != null) {
      await this.enqueue(queue, messages, contextData, orderingKey == null ? {} : { orderingKey });
      return;
    }
    const results = await Promise.allSettled(
      messages.map((message) => deliverOutboxMessage(message, this.options)),
    );
    const errors = results.flatMap((result) => result.status === "rejected" ? [result.reason] : []);
    if (errors.length > 0) {
      throw new AggregateError(
        errors,
        `Failed to deliver to ${errors.length} of ${messages.length} inboxes.`,
      );
    }
  }

  sendActivity(
    ctx: Context<TContextData>,
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options: SendActivityOptions,
  ): Promise<void> {
    return sendActivity(this, ctx, sender, recipients, activity, options);
  }
}

// Stands in for the queue of a task message processed without one, so that
// processTaskMessage() rethrows the handler's error instead of re-enqueueing.
const NO_RETRY_QUEUE: MessageQueue = {
  nativeRetrial: true,
  enqueue: () => Promise.reject(new Error("No queue to re-enqueue the task into.")),
  listen: () => Promise.reject(new Error("No queue to listen to.")),
};

/**
 * Creates a federation.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @param options The options; `kv` is required.
 * @returns The federation.
 * @throws {FederationOptionError} When an option is missing or invalid.
 * @example
 * ```ts
 * const federation = createFederation<{ db: Db }>({
 *   kv: new MemoryKvStore(),
 *   queue: new InProcessMessageQueue(),
 * });
 * ```
 * @since 0.1.0
 */
export function createFederation<TContextData>(
  options: FederationOptions<TContextData>,
): Federation<TContextData> {
  return new FederationImpl(options);
}
