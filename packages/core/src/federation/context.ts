import { getLogger } from "@logtape/logtape";
import {
  type Activity,
  type DocumentLoader,
  Object as APObject,
  type Recipient,
} from "@fedify/vocab";
import { withDocumentLoadBudget } from "../activitypub/network/document-budget.ts";
import { createFetchDocumentLoader } from "../activitypub/network/document-loader.ts";
import { signatureAlgorithmOf } from "../activitypub/signatures/spec.ts";
import { lookupWebFinger, parseFediverseHandle } from "../activitypub/webfinger/lookup.ts";
import type { ActorKeyPair } from "../activitypub/actors/key-pairs.ts";
import type { TracerProvider } from "@opentelemetry/api";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import type { Message } from "./message.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { Federation } from "./api.ts";
import type { FederationRegistry, ObjectClass } from "./registry.ts";
import type { SendActivityOptions, SenderIdentity } from "./send-activity.ts";
import {
  checkTaskEnqueueOptions,
  type TaskDefinition,
  type TaskEnqueueManyOptions,
  type TaskEnqueueOptions,
  type TaskEnqueueResult,
} from "../tasks/definition.ts";
import { type PreparedTaskMessages, prepareTaskMessages } from "../tasks/enqueue.ts";

const lookupLogger = getLogger(["fedwork", "federation", "lookup"]);

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
  /**
   * Loads JSON-LD contexts (the well-known ones need no network), so that
   * a context can be given to vocabulary getters:
   * `await follow.getActor(ctx)`.
   * @since 0.2.0
   */
  readonly contextLoader: DocumentLoader;
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
   * Builds the URI of an object served by an object dispatcher.
   * @param cls The class given to `setObjectDispatcher()`, e.g. `Note`.
   * @param values A non-empty string for each variable of its path.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without an object dispatcher for the
   *         class.
   * @throws {TypeError} When a value is missing.
   * @since 0.2.0
   */
  getObjectUri<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    values: Readonly<Record<string, string>>,
  ): URL;

  /**
   * Builds the NodeInfo document's URI.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a NodeInfo dispatcher.
   * @since 0.2.0
   */
  getNodeInfoUri(): URL;

  /**
   * Tells which of this federation's routes a URI is, and with which
   * values: the inverse of the URI builders.
   * @param uri A URI, e.g. the object of a received `Follow`.
   * @returns What it is, or `null` when it is not one of ours.
   * @since 0.2.0
   * @example
   * ```ts
   * const parsed = ctx.parseUri(follow.objectId);
   * if (parsed?.type === "actor") console.log(parsed.identifier);
   * ```
   */
  parseUri(uri: URL | null | undefined): ParseUriResult | null;

  /**
   * Returns an actor's key pairs from the key pairs dispatcher, with their
   * key ids (`#main-key`, `#key-2`, …) and the vocabulary objects to publish
   * on the actor (`publicKey`, `assertionMethods`).
   * @param identifier The actor's identifier.
   * @returns The key pairs; empty when the actor has none.
   * @throws {RouteNotRegisteredError} Without a key pairs dispatcher.
   * @since 0.2.0
   * @example
   * ```ts
   * const keys = await ctx.getActorKeyPairs(identifier);
   * return new Person({
   *   id: ctx.getActorUri(identifier),
   *   publicKey: keys[0]?.cryptographicKey,
   *   assertionMethods: keys.map((key) => key.multikey),
   * });
   * ```
   */
  getActorKeyPairs(identifier: string): Promise<ActorKeyPair[]>;

  /**
   * Returns a document loader whose GETs are signed by one of your actors,
   * for servers that require authorized fetch (Mastodon's secure mode).
   * @param identity The actor.
   * @returns The loader.
   * @throws {RouteNotRegisteredError} Without a key pairs dispatcher.
   * @throws {TypeError} When the actor has no RSA key.
   * @since 0.2.0
   * @example
   * ```ts
   * const documentLoader = await ctx.getDocumentLoader({ identifier: "alice" });
   * const actor = await ctx.lookupObject("@bob@example.com", { documentLoader });
   * ```
   */
  getDocumentLoader(identity: { readonly identifier: string }): Promise<DocumentLoader>;

  /**
   * Fetches an ActivityStreams object by its URI, or an actor by its
   * fediverse handle (`@user@host`, `user@host` or `acct:user@host`,
   * resolved through WebFinger).  An object whose id is on another origin
   * than the document it came from is refused.
   * @param identifier The URI or handle.
   * @param options The document loader to fetch with (e.g. one from
   *                {@link Context.getDocumentLoader}); the federation's by
   *                default.
   * @returns The object, or `null` when it cannot be found or parsed.
   * @since 0.2.0
   * @example
   * ```ts
   * const bob = await ctx.lookupObject("@bob@example.com");
   * if (isActor(bob)) await ctx.sendActivity({ identifier: "alice" }, bob, follow);
   * ```
   */
  lookupObject(
    identifier: string | URL,
    options?: { readonly documentLoader?: DocumentLoader },
  ): Promise<APObject | null>;

  /**
   * Sends an activity to recipients' inboxes.  With an outbox queue it
   * enqueues the deliveries (one message per inbox, or one fan-out message
   * for many inboxes) and returns; without one it delivers before
   * returning.  Each delivery is signed, when it is made, with the
   * sender's first RSA key from the key pairs dispatcher.
   * @param sender The sending actor.
   * @param recipients An actor, several, or `"followers"` for every
   *                   follower the followers dispatcher lists.
   * @param activity The activity; it must have an actor.  An activity
   *                 without an ID gets a `urn:uuid:` one.
   * @param options Shared inbox preference, fan-out and ordering.
   * @throws {TypeError} When an argument is malformed.
   * @throws {RouteNotRegisteredError} With `"followers"` but no followers
   *         dispatcher, or without a key pairs dispatcher.
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
   * @throws {UnknownOptionError} When an option is not one this method
   *         takes (since 0.3.0); the message suggests the nearest name.
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
   * @throws {UnknownOptionError} When an option is not one this method
   *         takes (since 0.3.0); the message suggests the nearest name.
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
 * What {@link Context.parseUri} found.
 * @since 0.2.0
 */
export type ParseUriResult =
  | { readonly type: "actor"; readonly identifier: string }
  | { readonly type: "inbox"; readonly identifier: string | null }
  | { readonly type: "outbox" | "followers" | "following"; readonly identifier: string }
  | {
    readonly type: "object";
    readonly class: ObjectClass;
    readonly typeId: URL;
    readonly values: Readonly<Record<string, string>>;
  }
  | { readonly type: "nodeinfo" };

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
  /** Returns an actor's key pairs from the key pairs dispatcher. */
  getActorKeyPairs(ctx: Context<TContextData>, identifier: string): Promise<ActorKeyPair[]>;
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

  /** The federation's internals.  Internal. */
  get federationHost(): ContextHost<TContextData> {
    return this.#host;
  }

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

  get contextLoader(): DocumentLoader {
    return this.#host.documentLoader;
  }

  get tracerProvider(): TracerProvider {
    return this.#host.tracerProvider;
  }

  #build(name: string, values: Readonly<Record<string, string>>, missing: [string, string]): URL {
    const routes = this.#host.registry.routes;
    if (!routes.has(name)) throw new RouteNotRegisteredError(missing[0], missing[1]);
    return new URL(routes.build(name, values), this.canonicalOrigin);
  }

  #buildForIdentifier(name: string, identifier: string, missing: [string, string]): URL {
    if (typeof identifier !== "string" || identifier === "") {
      throw new TypeError("The identifier must be a non-empty string.");
    }
    return this.#build(name, { identifier }, missing);
  }

  getActorUri(identifier: string): URL {
    return this.#buildForIdentifier("actor", identifier, [
      "actor dispatcher",
      "setActorDispatcher",
    ]);
  }

  getInboxUri(identifier?: string): URL {
    if (identifier == null) {
      return this.#build("sharedInbox", {}, [
        "shared inbox path",
        "setInboxListeners(inboxPath, sharedInboxPath)",
      ]);
    }
    return this.#buildForIdentifier("inbox", identifier, [
      "inbox listener set",
      "setInboxListeners",
    ]);
  }

  getOutboxUri(identifier: string): URL {
    return this.#buildForIdentifier("outbox", identifier, [
      "outbox dispatcher",
      "setOutboxDispatcher",
    ]);
  }

  getFollowersUri(identifier: string): URL {
    return this.#buildForIdentifier("followers", identifier, [
      "followers dispatcher",
      "setFollowersDispatcher",
    ]);
  }

  getFollowingUri(identifier: string): URL {
    return this.#buildForIdentifier("following", identifier, [
      "following dispatcher",
      "setFollowingDispatcher",
    ]);
  }

  getObjectUri<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    values: Readonly<Record<string, string>>,
  ): URL {
    const typeId = cls?.typeId?.href;
    const registration = typeId == null ? undefined : this.#host.registry.objects.get(typeId);
    if (registration == null) {
      throw new RouteNotRegisteredError(
        `object dispatcher for ${cls?.name ?? String(cls)}`,
        "setObjectDispatcher",
      );
    }
    return this.#build(registration.routeName, values, ["", ""]);
  }

  getNodeInfoUri(): URL {
    return this.#build("nodeinfo", {}, ["NodeInfo dispatcher", "setNodeInfoDispatcher"]);
  }

  parseUri(uri: URL | null | undefined): ParseUriResult | null {
    if (uri == null) return null;
    if (uri.origin !== this.canonicalOrigin && uri.origin !== this.origin) return null;
    const match = this.#host.registry.routes.route(uri.pathname);
    if (match == null) return null;
    const { name, values } = match;
    switch (name) {
      case "actor":
      case "outbox":
      case "followers":
      case "following":
        return { type: name, identifier: values.identifier };
      case "inbox":
        return { type: "inbox", identifier: values.identifier };
      case "sharedInbox":
        return { type: "inbox", identifier: null };
      case "nodeinfo":
        return { type: "nodeinfo" };
    }
    if (name.startsWith("object:")) {
      const registration = this.#host.registry.objects.get(name.slice("object:".length));
      if (registration == null) return null;
      return {
        type: "object",
        class: registration.cls,
        typeId: registration.cls.typeId,
        values,
      };
    }
    return null;
  }

  getActorKeyPairs(identifier: string): Promise<ActorKeyPair[]> {
    return this.#host.getActorKeyPairs(this, identifier);
  }

  async getDocumentLoader(identity: { readonly identifier: string }): Promise<DocumentLoader> {
    const keys = await this.getActorKeyPairs(identity?.identifier);
    const key = keys.find((k) => signatureAlgorithmOf(k.privateKey) === "rsa-v1_5-sha256");
    if (key == null) {
      throw new TypeError(
        `The actor ${JSON.stringify(identity.identifier)} has no RSA key to sign requests with.`,
      );
    }
    const { userAgent, allowPrivateAddress, firstKnock, remoteRequests } = this.#host.options;
    return createFetchDocumentLoader({
      userAgent,
      allowPrivateAddress,
      timeout: { milliseconds: remoteRequests.timeoutMs },
      maxBodyBytes: remoteRequests.maxBodyBytes,
      maxRedirects: remoteRequests.maxRedirects,
      signer: { keyId: key.keyId, privateKey: key.privateKey, firstKnock },
    });
  }

  async lookupObject(
    identifier: string | URL,
    options: { readonly documentLoader?: DocumentLoader } = {},
  ): Promise<APObject | null> {
    const documentLoader = options.documentLoader ?? this.documentLoader;
    let url: URL | null = null;
    const text = identifier instanceof URL ? null : identifier.trim();
    const handle = text == null || (/^https?:/i.test(text)) ? null : parseFediverseHandle(text);
    try {
      if (identifier instanceof URL) url = identifier;
      else if (handle != null) {
        const { userAgent, allowPrivateAddress, remoteRequests } = this.#host.options;
        const jrd = await lookupWebFinger(`acct:${handle.user}@${handle.host}`, {
          userAgent,
          allowPrivateAddress,
          timeout: { milliseconds: remoteRequests.timeoutMs },
          maxBodyBytes: remoteRequests.maxBodyBytes,
        });
        const self = jrd?.links?.find((link) =>
          link.rel === "self" && link.href != null &&
          (link.type === "application/activity+json" ||
            link.type?.startsWith("application/ld+json"))
        );
        if (self?.href == null) {
          lookupLogger.debug("lookupObject({identifier}): no ActivityPub link in WebFinger.", {
            identifier: String(identifier),
          });
          return null;
        }
        url = new URL(self.href);
      } else if (text != null && URL.canParse(text)) url = new URL(text);
      if (url == null) {
        lookupLogger.debug("lookupObject({identifier}): neither a URL nor a handle.", {
          identifier: String(identifier),
        });
        return null;
      }
      const { document, documentUrl } = await documentLoader(url.href);
      const object = await APObject.fromJsonLd(document, {
        documentLoader: withDocumentLoadBudget(documentLoader),
        contextLoader: withDocumentLoadBudget(this.documentLoader),
      });
      // A server may only speak for its own objects.
      if (object.id != null && object.id.origin !== new URL(documentUrl).origin) {
        lookupLogger.debug(
          "lookupObject({identifier}): {documentUrl} served {id}, another origin.",
          {
            identifier: String(identifier),
            documentUrl,
            id: object.id.href,
          },
        );
        return null;
      }
      return object;
    } catch (error) {
      // A remote party's failure, or a refused address: why, without a
      // stack trace.
      lookupLogger.debug("lookupObject({identifier}) failed: {reason}", {
        identifier: String(identifier),
        reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      return null;
    }
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
    try {
      checkTaskEnqueueOptions(options, "enqueueTask()");
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#enqueueTasks(task, [data], options).then(([result]) => result);
  }

  enqueueTaskMany<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    payloads: readonly NoInfer<TInput>[],
    options?: TaskEnqueueManyOptions<NoInfer<TInput>>,
  ): Promise<TaskEnqueueResult[]> {
    try {
      checkTaskEnqueueOptions(options, "enqueueTaskMany()");
    } catch (error) {
      return Promise.reject(error);
    }
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
