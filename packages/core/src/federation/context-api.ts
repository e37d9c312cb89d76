// The contexts every callback gets (Context, RequestContext, InboxContext,
// TaskContext) and the task registry typed for them: interfaces only, so
// that the interfaces of the federation can refer to each other without
// tying in the code that implements them (context.ts and its subclasses).
import type {
  Activity,
  Actor,
  Collection,
  CryptographicKey,
  DocumentLoader,
  Link,
  Object as APObject,
  Recipient,
  Tombstone,
} from "@fedify/vocab";
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { ActorKeyPair } from "../activitypub/actors/key-pairs.ts";
import type { TraverseCollectionOptions } from "../activitypub/collections/traverse.ts";
import type { JsonValue, NodeInfo } from "../activitypub/nodeinfo/document.ts";
import type { GetNodeInfoOptions } from "../activitypub/nodeinfo/lookup.ts";
import type { RouteActivityOptions } from "../activitypub/inbox/route.ts";
import type {
  LookupWebFingerOptions,
  ResourceDescriptor,
} from "../activitypub/webfinger/lookup.ts";
import type {
  SendActivityOptions,
  SendActivityOptionsForCollection,
  SenderIdentity,
} from "../activitypub/outbox/send-options.ts";
import type {
  TaskDefinition,
  TaskEnqueueManyOptions,
  TaskEnqueueOptions,
  TaskEnqueueResult,
  TaskManyOptions,
  TaskOptions,
} from "../tasks/definition.ts";
import type { TaskRegistry as GenericTaskRegistry } from "../tasks/registry.ts";
import type { TaskResultValue } from "../tasks/result.ts";
import type { TaskRunInfo } from "../tasks/run-info.ts";
import type { SendEventOptions, SendEventResult, TaskSteps } from "../tasks/steps/types.ts";
import type {
  BatchEnqueueResult,
  BatchMember,
  EnqueueBatchOptions,
} from "../operator/batches/types.ts";
import type { Federation } from "./api.ts";
import type { ObjectClass } from "./registry-api.ts";

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
   * The meter provider the federation records its metrics with (the
   * `meterProvider` option, else OpenTelemetry's global one), for the
   * application's own metrics.
   * @since 0.3.0
   */
  readonly meterProvider: MeterProvider;

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
   * Builds an actor's liked collection URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a liked dispatcher.
   * @since 0.3.0
   */
  getLikedUri(identifier: string): URL;

  /**
   * Builds an actor's featured (pinned posts) collection URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a featured dispatcher.
   * @since 0.3.0
   */
  getFeaturedUri(identifier: string): URL;

  /**
   * Builds an actor's featured tags collection URI.
   * @param identifier The actor's identifier.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a featured tags dispatcher.
   * @since 0.3.0
   */
  getFeaturedTagsUri(identifier: string): URL;

  /**
   * Builds the URI of a custom collection.
   * @param name The name given to `setCollectionDispatcher()` or
   *             `setOrderedCollectionDispatcher()`.
   * @param values A non-empty string for each variable of its path.
   * @returns The URI.
   * @throws {RouteNotRegisteredError} Without a collection of that name.
   * @throws {TypeError} When a value is missing.
   * @since 0.3.0
   * @example
   * ```ts
   * ctx.getCollectionUri("tagged", { identifier: "alice", tag: "fedi" });
   * ```
   */
  getCollectionUri(name: string | symbol, values: Readonly<Record<string, string>>): URL;

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
   * Goes through a collection's items, fetching its pages (`first`, then
   * each `next`) with this context's document loader, within bounds: as
   * the module function `traverseCollection()`, whose options it takes.
   * @param collection The collection, e.g. from `lookupObject()`.
   * @param options The bounds (`maxPages`, 100; `maxItems`, 10,000), the
   *                interval between pages, `suppressError`, and loaders
   *                other than the context's.
   * @returns The items, in order.
   * @throws {TypeError} When an option is malformed.
   * @throws {CollectionTraversalError} While iterating, when a bound is
   *         reached (unless `suppressError`).
   * @since 0.3.0
   * @example
   * ```ts
   * const outbox = await ctx.lookupObject("https://remote.example/users/bob/outbox");
   * if (outbox instanceof Collection) {
   *   for await (const item of ctx.traverseCollection(outbox)) console.log(item.id?.href);
   * }
   * ```
   */
  traverseCollection(
    collection: Collection,
    options?: TraverseCollectionOptions,
  ): AsyncIterable<APObject | Link>;

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
   * Fetches another server's NodeInfo, as `getNodeInfo()` does, with the
   * federation's user agent, address policy and remote request limits.
   * @param url The server (only its origin counts), or with `direct` the
   *            document's URL.
   * @param options How to fetch and read it; the limits override the
   *                federation's.
   * @returns The metadata, or `undefined` when the server has none, fails
   *          or answers an invalid document.
   * @throws {PrivateAddressError} When the server is not public and the
   *         federation does not allow private addresses.
   * @since 0.3.0
   * @example
   * ```ts
   * const info = await ctx.lookupNodeInfo("https://mastodon.social/");
   * if (info?.software.name === "mastodon") console.log(info.software.version);
   * ```
   */
  lookupNodeInfo(
    url: URL | string,
    options?: GetNodeInfoOptions & { readonly parse?: "strict" | "best-effort" },
  ): Promise<NodeInfo | undefined>;
  /**
   * Fetches another server's NodeInfo as JSON, unread.
   * @param url The server, or with `direct` the document's URL.
   * @param options How to fetch it; `parse` is `"none"`.
   * @returns The JSON, or `undefined` when the server has none or fails.
   * @throws {PrivateAddressError} When the server is not public and the
   *         federation does not allow private addresses.
   * @since 0.3.0
   */
  lookupNodeInfo(
    url: URL | string,
    options: GetNodeInfoOptions & { readonly parse: "none" },
  ): Promise<JsonValue | undefined>;

  /**
   * Asks a host's WebFinger endpoint about a resource, as
   * `lookupWebFinger()` does, with the federation's user agent, address
   * policy and remote request limits.
   * @param resource An `acct:user@host` URI or an http(s) URL.
   * @param options Limits overriding the federation's.
   * @returns The descriptor, or `null` when the host has none or fails.
   * @throws {PrivateAddressError} When the host is not public and the
   *         federation does not allow private addresses.
   * @since 0.3.0
   * @example
   * ```ts
   * const jrd = await ctx.lookupWebFinger("acct:bob@example.com");
   * const self = jrd?.links?.find((link) => link.rel === "self");
   * ```
   */
  lookupWebFinger(
    resource: URL | string,
    options?: LookupWebFingerOptions,
  ): Promise<ResourceDescriptor | null>;

  /**
   * A context like this one with other application data, as in Fedify.
   * @param data The new application data.
   * @returns The new context; this one is unchanged.
   * @since 0.3.0
   */
  clone(data: TContextData): Context<TContextData>;

  /**
   * Routes an activity that did not come in a signed request (e.g. one
   * enclosed in another activity) to the inbox listeners, as Fedify's
   * `routeActivity()` does.  It is verified first: by its Object Integrity
   * Proof, or, without one, by fetching it from its id, whose origin must
   * be its actor's (the fetched copy is what listeners get).
   * @param recipient The identifier of the actor whose inbox it goes to,
   *                  or `null` for the shared inbox.
   * @param activity The activity.
   * @param options Whether to run the listener now instead of enqueueing,
   *                and the loaders.
   * @returns `true` when it was verified and enqueued (or handled);
   *          `false` when it could not be verified or is malformed.
   * @throws {UnknownOptionError} When an option is not one it takes.
   * @throws When run now (`immediate` or no inbox queue) and the listener
   *         fails.
   * @since 0.3.0
   * @example
   * ```ts
   * // In an Announce listener: route the announced activity, if genuine.
   * const inner = await announce.getObject(ctx);
   * if (inner instanceof Activity) await ctx.routeActivity(ctx.recipient, inner);
   * ```
   */
  routeActivity(
    recipient: string | null,
    activity: Activity,
    options?: RouteActivityOptions,
  ): Promise<boolean>;

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
   *                 without an ID gets one on the canonical origin, as in
   *                 Fedify: `https://example.com/#Create/<uuid>` (a
   *                 `urn:uuid:` one before 0.3.0).
   * @param options Shared inbox preference, fan-out and ordering; with
   *                `"followers"`, `syncCollection` (FEP-8fcf) as well.
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
    options?: SendActivityOptionsForCollection,
  ): Promise<void>;

  /**
   * Sends an event to the tasks waiting for it (`ctx.step.waitForEvent()`):
   * what `federation.sendEvent()` does.
   * @param event The event's name.
   * @param options The key, the data and the window.
   * @returns How many waiting tasks were woken.
   * @throws {TypeError} When the name or an option is invalid.
   * @since 0.4.0
   */
  sendEvent<TEventData>(
    event: string,
    options: SendEventOptions<TEventData>,
  ): Promise<SendEventResult>;

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

  /**
   * Enqueues a batch of tasks and, exactly once, a completion task when
   * every member has completed or failed for good (a member that will be
   * retried is not done yet).  The completion task receives a
   * `BatchCompletion`: the counts, the ids of the failed members and
   * `options.data`.  A running member may add members with
   * `ctx.addToBatch()`; the batch is sealed when every member is done, and
   * it cannot be before this call returns (its members are recorded as
   * pending before any is enqueued), nor while an adding member runs.
   * Needs a key–value store with `cas()`.  Called from a task, the batch's
   * and members' ids derive from the task's id, so that the task run again
   * after a crash finds the same batch rather than starting another.
   * @param members The members: a task, its payload and its options each.
   * @param options The completion task and its JSON-compatible data.
   * @returns The batch's id and its members' task ids.
   * @throws {TaskNotDefinedError} When a task is from another federation.
   * @throws {TaskValidationError} When a payload, or the completion task's
   *         payload, does not match its schema.
   * @throws {TypeError} When an option is malformed, or the store has no
   *         `cas()`.
   * @throws {UnknownOptionError} When an option is not one this method takes.
   * @example
   * ```ts ignore
   * const { batchId } = await ctx.enqueueBatch(
   *   accounts.map((handle) => ({ task: lookUpAccount, data: { handle } })),
   *   { onComplete: importFinished, data: { userId: "alice" } },
   * );
   * ```
   * @since 0.3.0
   */
  enqueueBatch<TData = null>(
    members: readonly BatchMember<TContextData>[],
    options: EnqueueBatchOptions<TContextData, TData>,
  ): Promise<BatchEnqueueResult>;
}

/**
 * What {@link Context.parseUri} found.
 * @since 0.2.0
 */
export type ParseUriResult =
  | { readonly type: "actor"; readonly identifier: string }
  | { readonly type: "inbox"; readonly identifier: string | null }
  | {
    readonly type: "outbox" | "followers" | "following" | "liked" | "featured" | "featuredTags";
    readonly identifier: string;
  }
  | {
    /** `"collection"` or, for an `OrderedCollection`, `"orderedCollection"` (since 0.3.0). */
    readonly type: "collection" | "orderedCollection";
    readonly name: string | symbol;
    readonly class: ObjectClass;
    readonly typeId: URL;
    readonly values: Readonly<Record<string, string>>;
  }
  | {
    readonly type: "object";
    readonly class: ObjectClass;
    readonly typeId: URL;
    readonly values: Readonly<Record<string, string>>;
  }
  | { readonly type: "nodeinfo" };

/**
 * Options for `ctx.getActor()`, as in Fedify.
 * @since 0.3.0
 */
export interface GetActorOptions {
  /**
   * What a `Tombstone` from the actor dispatcher comes back as:
   * `"suppress"` makes it `null`, `"passthrough"` returns it.
   * @default `"suppress"`
   */
  readonly tombstone?: "suppress" | "passthrough";
}

/**
 * Options for `ctx.getSignedKey()`, as in Fedify.
 * @since 0.3.0
 */
export interface GetSignedKeyOptions {
  /**
   * Loads the signing key's document, in place of the federation's
   * (cached) key fetcher; the KV store's key cache is still used.
   * @default the federation's key fetcher
   */
  documentLoader?: DocumentLoader;
  /** Accepted for Fedify compatibility; keys need no JSON-LD contexts. */
  contextLoader?: DocumentLoader;
  /** Accepted for Fedify compatibility; the federation's is used. */
  tracerProvider?: TracerProvider;
}

/**
 * A context for one incoming request: what the actor, object and
 * collection dispatchers, the NodeInfo dispatcher and the authorization
 * predicates get.
 * @typeParam TContextData The type of the application data.
 * @since 0.2.0
 */
export interface RequestContext<TContextData> extends Context<TContextData> {
  /** The request. */
  readonly request: Request;
  /** The request's URL. */
  readonly url: URL;

  /**
   * Returns one of your actors, as the actor dispatcher makes it.
   * @param identifier The actor's identifier.
   * @returns The actor, or `null` when there is none (or it is a
   *          `Tombstone`).
   * @throws {RouteNotRegisteredError} Without an actor dispatcher.
   */
  getActor(
    identifier: string,
    options?: GetActorOptions & { readonly tombstone?: "suppress" | undefined },
  ): Promise<Actor | null>;
  /**
   * Returns one of your actors, or its `Tombstone` (since 0.3.0).
   * @param identifier The actor's identifier.
   * @param options `{ tombstone: "passthrough" }`.
   * @returns The actor, its `Tombstone`, or `null` when there is none.
   * @throws {RouteNotRegisteredError} Without an actor dispatcher.
   */
  getActor(
    identifier: string,
    options: GetActorOptions & { readonly tombstone: "passthrough" },
  ): Promise<Actor | Tombstone | null>;
  /**
   * Returns one of your actors, or, with `tombstone: "passthrough"`, its
   * `Tombstone` (since 0.3.0).
   * @param identifier The actor's identifier.
   * @param options What to do with a `Tombstone`.
   * @returns The actor, a `Tombstone`, or `null`.
   * @throws {RouteNotRegisteredError} Without an actor dispatcher.
   */
  getActor(identifier: string, options: GetActorOptions): Promise<Actor | Tombstone | null>;

  /**
   * Returns one of your objects, as its object dispatcher makes it.
   * @param cls The class, e.g. `Note`.
   * @param values The values of its path's variables.
   * @returns The object, or `null`.
   * @throws {RouteNotRegisteredError} Without an object dispatcher for the
   *         class.
   */
  getObject<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    values: Readonly<Record<string, string>>,
  ): Promise<TObject | null>;

  /**
   * Verifies the request's HTTP signature (either scheme), for authorized
   * fetch ("secure mode"): the key that signed it, or `null` when the
   * request is unsigned or the signature does not verify.  Computed once
   * per context.
   * @param options How to load the key (since 0.3.0); only the first
   *                call's options count.
   * @returns The key, with its owner.
   */
  getSignedKey(options?: GetSignedKeyOptions): Promise<CryptographicKey | null>;

  /**
   * The actor that owns the key that signed the request, fetched by the
   * document loader, or `null` when the request is not signed or the owner
   * cannot be loaded.
   * @returns The actor.
   */
  getSignedKeyOwner(): Promise<Actor | null>;

  /**
   * A context for the same request with other application data.
   * @param data The new application data.
   * @returns The new context.
   * @since 0.3.0
   */
  clone(data: TContextData): RequestContext<TContextData>;
}

/**
 * The context inbox listeners (and the inbox error handler) get.
 * @typeParam TContextData The type of the application data.
 * @since 0.2.0
 */
export interface InboxContext<TContextData> extends Context<TContextData> {
  /**
   * The identifier of the actor whose inbox received the activity, or
   * `null` when it came through the shared inbox.
   */
  readonly recipient: string | null;

  /**
   * Aborted when processing this activity runs past the federation's
   * `inboxTimeout` (with a `HandlerTimeoutError` as its reason) or when the
   * worker shuts down.  Pass it on to what the listener awaits (`fetch()`,
   * a database query), or check it between steps, and throw soon after it
   * aborts: the activity is then retried.  A listener still running after
   * the federation's `timeoutGracePeriod` is abandoned: the worker moves on
   * and leaves it running.  Never aborts for listeners run in the request
   * (without an inbox queue).
   * @since 0.3.0
   */
  readonly signal: AbortSignal;

  /**
   * Forwards the received activity, exactly as it was received (so that
   * its proofs or signatures stay valid), to other inboxes, signing the
   * requests as `forwarder` (e.g. a reply to your actor's post forwarded to
   * its followers).  Receivers that trust only HTTP signatures refuse a
   * forwarded activity whose actor is not the forwarder, unless it carries
   * an object proof they verify.
   * @param forwarder Your actor that forwards.
   * @param recipients The recipients, or `"followers"` for the forwarder's
   *                   followers.
   * @param options Shared inbox preference, fan-out and ordering.
   * @returns Resolves once enqueued (or delivered, without an outbox queue).
   * @throws {TypeError} When an argument is malformed.
   */
  forwardActivity(
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    options?: SendActivityOptions,
  ): Promise<void>;

  /**
   * A context for the same activity with other application data.
   * @param data The new application data.
   * @returns The new context.
   * @since 0.3.0
   */
  clone(data: TContextData): InboxContext<TContextData>;
}

/**
 * The context a task handler (and its `onError`) gets: a {@link Context}
 * for the base URL the task was enqueued from, plus `task`, what the
 * handler knows about its run (attempt, message id, enqueue time and an
 * `AbortSignal` that fires at shutdown).
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface TaskContext<TContextData> extends Context<TContextData> {
  /** The run this handler is in. */
  readonly task: TaskRunInfo;

  /**
   * Durable steps: results recorded in the key–value store, so that a run
   * after a retry, a crash, a sleep or a wait skips what was done.
   * @example
   * ```ts ignore
   * const followed = await ctx.step.run("follow", () => sendFollow(ctx, actor));
   * await ctx.step.sleep("pause", { hours: 1 });
   * const accept = await ctx.step.waitForEvent("accept", {
   *   event: "follow-accepted",
   *   key: followed.id,
   *   timeout: { days: 7 },
   * });
   * ```
   * @since 0.4.0
   */
  readonly step: TaskSteps;

  /**
   * Adds members to the batch this task is a member of (a fan-out): they
   * are recorded as pending before this task can be counted done, so the
   * batch's completion task waits for them too.  Called again by a run of
   * the same task after a crash, it adds the same members (their ids
   * derive from this task's id and the call's order), not new ones.
   * @param members The new members.
   * @returns The batch's id and the new members' task ids.
   * @throws {TypeError} When this task is not a batch member.
   * @throws {BatchSealedError} When this task was already counted done.
   * @example
   * ```ts ignore
   * await ctx.addToBatch(page.map((handle) => ({ task: lookUpAccount, data: { handle } })));
   * ```
   * @since 0.3.0
   */
  addToBatch(members: readonly BatchMember<TContextData>[]): Promise<BatchEnqueueResult>;

  /**
   * A context for the same run with other application data.
   * @param data The new application data.
   * @returns The new context.
   * @since 0.3.0
   */
  clone(data: TContextData): TaskContext<TContextData>;
}

/**
 * What {@link TaskRegistry.defineTask} takes besides the task's name: the
 * schema, the handler, and optional retry policy, `onError` hook, queue and
 * lifecycle event listeners.
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TSchema The payload's Standard Schema.
 * @typeParam TResult What the handler returns (since 0.3.0).
 * @since 0.1.0
 */
export type TaskDefinitionOptions<
  TContextData,
  TSchema extends StandardSchemaV1,
  TResult extends TaskResultValue | void = TaskResultValue | void,
> = TaskOptions<TaskContext<TContextData>, TSchema, TResult>;

/**
 * What {@link TaskRegistry.defineTask} takes for a task whose handler gets
 * many payloads per run: {@link TaskDefinitionOptions} with `handleMany`
 * and a handler of the run's items.
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TSchema The payload's Standard Schema.
 * @typeParam TResult The result type of one item.
 * @since 0.4.0
 */
export type TaskDefinitionManyOptions<
  TContextData,
  TSchema extends StandardSchemaV1,
  TResult extends TaskResultValue | void = TaskResultValue | void,
> = TaskManyOptions<TaskContext<TContextData>, TSchema, TResult>;

/**
 * Where typed background tasks are defined.  `Federation` and
 * `FederationBuilder` implement it (through `Federatable`).
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.1.0
 */
export type TaskRegistry<TContextData> = GenericTaskRegistry<
  TContextData,
  TaskContext<TContextData>
>;

/**
 * The context an outbox listener gets: a {@link RequestContext} for the
 * POST, with the outbox's owner and the posted activity to forward.
 * Fedify's interface of the same name.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface OutboxContext<TContextData> extends RequestContext<TContextData> {
  /** The identifier of the actor whose outbox received the POST. */
  readonly identifier: string;
  /**
   * Whether this context has sent or forwarded anything yet (a listener
   * that returns without it is logged: the client's activity went
   * nowhere).
   * @returns Whether it has.
   */
  hasDeliveredActivity(): boolean;
  /**
   * Forwards the posted activity as it was posted (its proofs untouched),
   * signing the requests as `forwarder`.
   * @param forwarder Your actor that forwards, usually
   *                  `{ identifier: ctx.identifier }`.
   * @param recipients The recipients, or `"followers"`.
   * @param options Shared inbox preference, fan-out and ordering.
   * @returns Resolves once enqueued (or delivered, without a queue).
   */
  forwardActivity(
    forwarder: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    options?: SendActivityOptions,
  ): Promise<void>;
  /**
   * The same context with other data.
   * @param data The data.
   * @returns The new context.
   */
  clone(data: TContextData): OutboxContext<TContextData>;
}
