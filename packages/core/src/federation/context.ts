import type { Activity, DocumentLoader, Recipient } from "@fedify/vocab";
import type { TracerProvider } from "@opentelemetry/api";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import type { Message } from "./message.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { Federation } from "./federation.ts";
import type { FederationRegistry, RouteRegistration } from "./registry.ts";
import type { SendActivityOptions, SenderIdentity } from "./send-activity.ts";
import type {
  TaskDefinition,
  TaskEnqueueManyOptions,
  TaskEnqueueOptions,
  TaskEnqueueResult,
} from "../tasks/definition.ts";
import { type PreparedTaskMessages, prepareTaskMessages } from "../tasks/enqueue.ts";

/**
 * What a context is bound to: the request's (or base URL's) origin and the
 * application data, plus the URI builders and `sendActivity()`.
 * @typeParam TContextData The type of the application data.
 * @since 0.1.0
 */
export interface Context<TContextData> {
  /** The application data given to `createContext()` or `startQueue()`. */
  readonly data: TContextData;
  /** The origin of the request or base URL, e.g. `https://example.com`. */
  readonly origin: string;
  /**
   * The origin URIs are built from: the federation's `origin` option when
   * set, else {@link Context.origin}.
   */
  readonly canonicalOrigin: string;
  /** The host (with port, if any) of {@link Context.canonicalOrigin}. */
  readonly host: string;
  /** The host name (without port) of {@link Context.canonicalOrigin}. */
  readonly hostname: string;
  /** The federation that made this context. */
  readonly federation: Federation<TContextData>;
  /** Loads remote JSON-LD documents. */
  readonly documentLoader: DocumentLoader;
  /** The tracer provider the federation uses. */
  readonly tracerProvider: TracerProvider;

  /**
   * Builds an actor's URI from the actor dispatcher's path.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without an actor dispatcher.
   */
  getActorUri(identifier: string): URL;

  /**
   * Builds the shared inbox URI.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a shared inbox path.
   */
  getInboxUri(): URL;
  /**
   * Builds an actor's inbox URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without inbox listeners.
   */
  getInboxUri(identifier: string): URL;

  /**
   * Builds an actor's outbox URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without an outbox dispatcher.
   */
  getOutboxUri(identifier: string): URL;

  /**
   * Builds an actor's followers collection URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a followers dispatcher.
   */
  getFollowersUri(identifier: string): URL;

  /**
   * Builds an actor's following collection URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a following dispatcher.
   */
  getFollowingUri(identifier: string): URL;

  /**
   * Sends an activity to recipients' inboxes.  With an outbox queue it
   * enqueues the deliveries (one message per inbox, or one fan-out message
   * for many inboxes) and returns; without one it delivers before
   * returning.  Deliveries are not signed yet.
   * @param sender The sending actor.
   * @param recipients An actor, several, or `"followers"` for every
   *                   follower the followers dispatcher lists.
   * @param activity The activity; it must have an actor.  An activity
   *                 without an ID gets a `urn:uuid:` one.
   * @param options Shared inbox preference, fan-out and ordering.
   * @throws {TypeError} When an argument is malformed.
   * @throws {RouteNotRegisteredError} With `"followers"` but no followers
   *         dispatcher.
   * @example
   * ```ts
   * await ctx.sendActivity({ identifier: "alice" }, follower, new Create({
   *   id: new URL("https://example.com/activities/1"),
   *   actor: ctx.getActorUri("alice"),
   *   object: new Note({ content: "Hello" }),
   * }));
   * ```
   */
  sendActivity(
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options?: SendActivityOptions,
  ): Promise<void>;

  /**
   * Enqueues a typed background task for a worker to run.  The payload is
   * validated against the task's schema and encoded before anything is
   * enqueued, so a bad payload fails here, in the caller.
   * @param task The task's handle, as this federation's (or its builder's)
   *             `defineTask()` returned it.
   * @param data The payload (the schema's input type).
   * @param options A `delay` before the task may run, an `orderingKey` and
   *                a `deduplicationKey` (since 0.2.0).
   * @returns Resolves once the message is in the queue (or deduplicated):
   *          `{ status: "enqueued", messageId }` or, when a pending task
   *          holds the `deduplicationKey`, `{ status: "deduplicated",
   *          deduplicationKey }` (since 0.2.0; `void` before).
   * @throws {TaskNotDefinedError} When the handle is from another
   *         federation or builder.
   * @throws {TaskQueueNotConfiguredError} When no queue applies to the task.
   * @throws {TaskValidationError} When the payload does not match the schema.
   * @throws {TaskPayloadEncodingError} When the payload cannot be encoded.
   * @throws {TaskDeduplicationNotSupportedError} With a `deduplicationKey`,
   *         when neither the queue nor the KvStore can hold it.
   * @throws {TypeError} When an option is malformed.
   * @example
   * ```ts
   * const sendDigest = federation.defineTask("send-digest", {
   *   schema: z.object({ userId: z.string() }),
   *   async handler(ctx, { userId }) {
   *     await ctx.data.mailer.sendDigest(userId);
   *   },
   * });
   * await ctx.enqueueTask(sendDigest, { userId: "alice" }, { delay: { minutes: 5 } });
   * ```
   * @since 0.1.0
   */
  enqueueTask<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options?: TaskEnqueueOptions,
  ): Promise<TaskEnqueueResult>;

  /**
   * Enqueues one task message per payload, resolving the queue once and
   * using its `enqueueMany()` when it has one.  Every payload is checked
   * before any is enqueued: one bad payload enqueues nothing.
   * @param task The task's handle.
   * @param payloads The payloads (the schema's input type).
   * @param options A `delay` and an `orderingKey`, shared by all messages,
   *                and a `deduplicationKey` (since 0.2.0): one key, or a
   *                function giving each payload its own.
   * @returns One result per payload, in order (since 0.2.0; `void` before).
   * @throws {TaskNotDefinedError} When the handle is from another
   *         federation or builder.
   * @throws {TaskQueueNotConfiguredError} When no queue applies to the task.
   * @throws {TaskValidationError} When a payload does not match the schema.
   * @throws {TaskPayloadEncodingError} When a payload cannot be encoded.
   * @throws {TypeError} When an option is malformed.
   * @example
   * ```ts
   * await ctx.enqueueTaskMany(sendDigest, users.map((user) => ({ userId: user.id })));
   * ```
   * @since 0.1.0
   */
  enqueueTaskMany<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    payloads: readonly NoInfer<TInput>[],
    options?: TaskEnqueueManyOptions<NoInfer<TInput>>,
  ): Promise<TaskEnqueueResult[]>;
}

/**
 * What a {@link ContextImpl} needs from its federation.  Internal.
 * @since 0.1.0
 */
export interface ContextHost<TContextData> {
  readonly federation: Federation<TContextData>;
  readonly registry: FederationRegistry<TContextData>;
  readonly canonicalOrigin?: string;
  readonly documentLoader: DocumentLoader;
  readonly tracerProvider: TracerProvider;
  /** The validated federation options (queues, retry policies, …). */
  readonly options: ResolvedFederationOptions;
  /**
   * Enqueues messages in one span, writing its trace context into each and
   * starting the workers first unless `manuallyStartQueue` is set.
   */
  enqueue(
    queue: MessageQueue,
    messages: readonly Message[],
    contextData: TContextData,
    options?: MessageQueueEnqueueOptions,
  ): Promise<void>;
  /** Enqueues prepared task messages, holding their deduplication keys. */
  enqueueTaskMessages(
    prepared: PreparedTaskMessages,
    contextData: TContextData,
  ): Promise<TaskEnqueueResult[]>;
  sendActivity(
    ctx: Context<TContextData>,
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options: SendActivityOptions,
  ): Promise<void>;
}

/**
 * The {@link Context} implementation.  Internal; contexts come from
 * `Federation.createContext()`.
 * @since 0.1.0
 */
export class ContextImpl<TContextData> implements Context<TContextData> {
  readonly data: TContextData;
  readonly origin: string;
  readonly canonicalOrigin: string;
  readonly host: string;
  readonly hostname: string;
  /** The base URL the context was created for.  Internal. */
  readonly url: URL;
  readonly #host: ContextHost<TContextData>;

  /**
   * @param host The federation's internals.
   * @param url The request URL or base URL.
   * @param data The application data.
   */
  constructor(host: ContextHost<TContextData>, url: URL, data: TContextData) {
    this.#host = host;
    this.url = url;
    this.data = data;
    this.origin = url.origin;
    this.canonicalOrigin = host.canonicalOrigin ?? url.origin;
    const canonical = host.canonicalOrigin == null ? url : new URL(this.canonicalOrigin);
    this.host = canonical.host;
    this.hostname = canonical.hostname;
  }

  get federation(): Federation<TContextData> {
    return this.#host.federation;
  }

  get documentLoader(): DocumentLoader {
    return this.#host.documentLoader;
  }

  get tracerProvider(): TracerProvider {
    return this.#host.tracerProvider;
  }

  #buildUri(
    route: RouteRegistration<unknown> | undefined,
    identifier: string,
    registration: string,
    method: string,
  ): URL {
    if (route == null) throw new RouteNotRegisteredError(registration, method);
    return this.#expand(route.path, identifier);
  }

  #expand(path: string, identifier: string): URL {
    if (typeof identifier !== "string" || identifier === "") {
      throw new TypeError("The identifier must be a non-empty string.");
    }
    return new URL(
      path.replace("{identifier}", encodeURIComponent(identifier)),
      this.canonicalOrigin,
    );
  }

  getActorUri(identifier: string): URL {
    const registry = this.#host.registry;
    return this.#buildUri(registry.actor, identifier, "actor dispatcher", "setActorDispatcher");
  }

  getInboxUri(identifier?: string): URL {
    const registry = this.#host.registry;
    if (identifier == null) {
      if (registry.sharedInboxPath == null) {
        throw new RouteNotRegisteredError(
          "shared inbox path",
          "setInboxListeners(inboxPath, sharedInboxPath)",
        );
      }
      return new URL(registry.sharedInboxPath, this.canonicalOrigin);
    }
    if (registry.inboxPath == null) {
      throw new RouteNotRegisteredError("inbox listener set", "setInboxListeners");
    }
    return this.#expand(registry.inboxPath, identifier);
  }

  getOutboxUri(identifier: string): URL {
    const registry = this.#host.registry;
    return this.#buildUri(registry.outbox, identifier, "outbox dispatcher", "setOutboxDispatcher");
  }

  getFollowersUri(identifier: string): URL {
    return this.#buildUri(
      this.#host.registry.followers,
      identifier,
      "followers dispatcher",
      "setFollowersDispatcher",
    );
  }

  getFollowingUri(identifier: string): URL {
    return this.#buildUri(
      this.#host.registry.following,
      identifier,
      "following dispatcher",
      "setFollowingDispatcher",
    );
  }

  sendActivity(
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options: SendActivityOptions = {},
  ): Promise<void> {
    return this.#host.sendActivity(this, sender, recipients, activity, options);
  }

  enqueueTask<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options?: TaskEnqueueOptions,
  ): Promise<TaskEnqueueResult> {
    return this.#enqueueTasks(task, [data], options).then(([result]) => result);
  }

  enqueueTaskMany<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    payloads: readonly NoInfer<TInput>[],
    options?: TaskEnqueueManyOptions<NoInfer<TInput>>,
  ): Promise<TaskEnqueueResult[]> {
    return this.#enqueueTasks(task, payloads, options as TaskEnqueueManyOptions<unknown>);
  }

  async #enqueueTasks<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    payloads: readonly unknown[],
    options: TaskEnqueueOptions | TaskEnqueueManyOptions<unknown> | undefined,
  ): Promise<TaskEnqueueResult[]> {
    const { queues, taskQueueResolution } = this.#host.options;
    const prepared = await prepareTaskMessages({
      registry: this.#host.registry.tasks,
      task: task as TaskDefinition<TContextData, unknown, unknown>,
      payloads,
      options,
      queues: {
        taskQueue: queues.task,
        outboxQueue: queues.outbox,
        resolution: taskQueueResolution,
      },
      // The origin only: a request's path and query mean nothing to a worker.
      baseUrl: new URL("/", this.origin),
    });
    // The federation's enqueue path opens the enqueue span, stamps its
    // trace context into the messages, starts the workers and holds
    // deduplication keys.
    return await this.#host.enqueueTaskMessages(prepared, this.data);
  }
}
