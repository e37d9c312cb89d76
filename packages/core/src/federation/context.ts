import type {
  Activity,
  Collection,
  DocumentLoader,
  Link,
  Object as APObject,
  Recipient,
} from "@fedify/vocab";
import {
  traverseCollection,
  type TraverseCollectionOptions,
} from "../activitypub/collections/traverse.ts";
import { lookupObject } from "../activitypub/lookup-object.ts";
import { createFetchDocumentLoader } from "../activitypub/network/document-loader.ts";
import { withDocumentLimits } from "../activitypub/network/document-budget.ts";
import { signatureAlgorithmOf } from "../activitypub/signatures/spec.ts";
import {
  lookupWebFinger,
  type LookupWebFingerOptions,
  type ResourceDescriptor,
} from "../activitypub/webfinger/lookup.ts";
import { getNodeInfo, type GetNodeInfoOptions } from "../activitypub/nodeinfo/lookup.ts";
import type { InboxMessage } from "../activitypub/inbox/message.ts";
import { routeActivity, type RouteActivityOptions } from "../activitypub/inbox/route.ts";
import type { PublicKeyFetcher } from "../activitypub/signatures/key-cache.ts";
import type { InboxRefusalLog } from "../activitypub/inbox/refusal-log.ts";
import { assertKnownOptions } from "../options/known-options.ts";
import type { Outcome } from "../processing/outcome.ts";
import type { ActorKeyPair } from "../activitypub/actors/key-pairs.ts";
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { RouteNotRegisteredError } from "./errors.ts";
import { describeName } from "../activitypub/collections/register.ts";
import { customCollectionOf } from "../activitypub/collections/routes.ts";
import { ACTOR_ALIAS_PREFIX } from "../activitypub/http/route-table.ts";
import type { Message } from "./message.ts";
import type { ResolvedFederationOptions } from "./options.ts";
import type { Federation } from "./api.ts";
import type { Context, InboxContext, ParseUriResult } from "./context-api.ts";
import type { FederationRegistry, ObjectClass } from "./registry-api.ts";
import type {
  SendActivityOptionsForCollection,
  SenderIdentity,
} from "../activitypub/outbox/send-options.ts";
import type { SendEventOptions, SendEventResult } from "../tasks/steps/types.ts";
import { type ActivityTransport, sendActivity } from "../activitypub/outbox/send-activity.ts";
import {
  checkTaskEnqueueOptions,
  type TaskDefinition,
  type TaskEnqueueManyOptions,
  type TaskEnqueueOptions,
  type TaskEnqueueResult,
} from "../tasks/definition.ts";
import type { TaskEnqueuer } from "../tasks/enqueuer.ts";
import type { BatchEnqueueOrigin, FederationBatches } from "../operator/batches/batches.ts";
import type {
  BatchEnqueueResult,
  BatchMember,
  EnqueueBatchOptions,
} from "../operator/batches/types.ts";

/**
 * What a {@link ContextImpl} needs from its federation.  Internal.
 * @since 0.1.0
 */
export interface ContextHost<TContextData> {
  readonly federation: Federation<TContextData>;
  readonly registry: FederationRegistry<TContextData>;
  // `| undefined`: the federation's getter returns undefined when no origin is
  // set, which exactOptionalPropertyTypes tells apart from an absent member.
  readonly canonicalOrigin?: string | undefined;
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
  /** Task batches (since 0.3.0). */
  readonly batches?: FederationBatches<TContextData>;
  /** The one path task messages take to the producer (since 0.4.0). */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
  /** What activities are sent through (since 0.4.0). */
  readonly outbox: ActivityTransport<Context<TContextData>>;
  /** Returns an actor's key pairs from the key pairs dispatcher. */
  getActorKeyPairs(ctx: Context<TContextData>, identifier: string): Promise<ActorKeyPair[]>;
  /** Fetches and caches public keys (since 0.3.0). */
  readonly fetchPublicKey: PublicKeyFetcher;
  /** Logs refused inbox requests and routed activities (since 0.4.0). */
  readonly inboxRefusals: InboxRefusalLog;
  /** The context an idempotency key callback gets (since 0.3.0). */
  createInboxContext(
    baseUrl: URL,
    data: TContextData,
    recipient: string | null,
    activity: Readonly<Record<string, unknown>>,
  ): InboxContext<TContextData>;
  /**
   * Takes a verified inbox message: enqueues it or, without an inbox queue
   * or with `immediate`, dispatches it now (since 0.3.0).
   */
  receive(
    message: InboxMessage,
    contextData: TContextData,
    options?: { readonly immediate?: boolean },
  ): Promise<Outcome | undefined>;
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
  readonly #host: ContextHost<TContextData>;
  #url: URL;
  /** Whether `#url` is shared with other contexts (copied on first read). */
  #urlShared: boolean;

  /**
   * The base URL the context was created for.  Internal.  A context made
   * from a shared URL (a worker's cache of parsed base URLs) hands out its
   * own copy, so that a caller that changes it changes no other context.
   */
  get url(): URL {
    if (this.#urlShared) {
      this.#url = new URL(this.#url.href);
      this.#urlShared = false;
    }
    return this.#url;
  }

  /** The federation's internals.  Internal. */
  get federationHost(): ContextHost<TContextData> {
    return this.#host;
  }

  /**
   * @param host The federation's internals.
   * @param url The request URL or base URL.
   * @param data The application data.
   * @param urlShared Whether other contexts share `url` (it is then copied
   *                  before anyone outside gets it).
   */
  constructor(
    host: ContextHost<TContextData>,
    url: URL,
    data: TContextData,
    urlShared = false,
  ) {
    this.#host = host;
    this.#url = url;
    this.#urlShared = urlShared;
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

  get meterProvider(): MeterProvider {
    return this.#host.options.meterProvider;
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
    const alias = `${ACTOR_ALIAS_PREFIX}${identifier}`;
    if (this.#host.registry.routes.has(alias)) {
      return this.#build(alias, {}, ["actor dispatcher", "setActorDispatcher"]);
    }
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

  getLikedUri(identifier: string): URL {
    return this.#buildForIdentifier("liked", identifier, [
      "liked dispatcher",
      "setLikedDispatcher",
    ]);
  }

  getFeaturedUri(identifier: string): URL {
    return this.#buildForIdentifier("featured", identifier, [
      "featured dispatcher",
      "setFeaturedDispatcher",
    ]);
  }

  getFeaturedTagsUri(identifier: string): URL {
    return this.#buildForIdentifier("featuredTags", identifier, [
      "featured tags dispatcher",
      "setFeaturedTagsDispatcher",
    ]);
  }

  getCollectionUri(name: string | symbol, values: Readonly<Record<string, string>>): URL {
    const registration = this.#host.registry.collections.get(name);
    if (registration == null) {
      throw new RouteNotRegisteredError(
        `collection dispatcher named ${describeName(name)}`,
        "setCollectionDispatcher",
      );
    }
    return this.#build(registration.routeName, values, ["", ""]);
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
      case "liked":
      case "featured":
      case "featuredTags":
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
    // What is left is a custom collection's route, or nothing of ours.
    const registration = customCollectionOf(this.#host.registry, name);
    if (registration == null) return null;
    return {
      type: registration.ordered ? "orderedCollection" : "collection",
      name: registration.name,
      class: registration.itemType,
      typeId: registration.itemType.typeId,
      values,
    };
  }

  traverseCollection(
    collection: Collection,
    options: TraverseCollectionOptions = {},
  ): AsyncIterable<APObject | Link> {
    // The federation's loader holds what it loads to the document limits;
    // a loader of the caller's is made to.
    return traverseCollection(collection, {
      ...options,
      documentLoader: options.documentLoader == null
        ? this.documentLoader
        : withDocumentLimits(options.documentLoader, this.#host.options.remoteDocuments.limits),
      contextLoader: options.contextLoader ?? this.contextLoader,
    });
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
    const { userAgent, allowPrivateAddress, firstKnock, remoteRequests, remoteDocuments } =
      this.#host.options;
    return withDocumentLimits(
      createFetchDocumentLoader({
        userAgent,
        allowPrivateAddress,
        timeout: { milliseconds: remoteRequests.timeoutMs },
        maxBodyBytes: remoteRequests.maxBodyBytes,
        maxRedirects: remoteRequests.maxRedirects,
        signer: { keyId: key.keyId, privateKey: key.privateKey, firstKnock },
      }),
      remoteDocuments.limits,
    );
  }

  async lookupObject(
    identifier: string | URL,
    options: { readonly documentLoader?: DocumentLoader } = {},
  ): Promise<APObject | null> {
    const { userAgent, allowPrivateAddress, remoteRequests, remoteDocuments } = this.#host.options;
    return await lookupObject(identifier, {
      documentLoader: options.documentLoader ?? this.documentLoader,
      contextLoader: this.documentLoader,
      budget: remoteDocuments.budget,
      webFinger: {
        userAgent,
        allowPrivateAddress,
        timeout: { milliseconds: remoteRequests.timeoutMs },
        maxBodyBytes: remoteRequests.maxBodyBytes,
      },
    });
  }

  // deno-lint-ignore no-explicit-any
  lookupNodeInfo(url: URL | string, options: GetNodeInfoOptions = {}): Promise<any> {
    // One call for both overloads: the options decide what it returns.
    const lookup = getNodeInfo as (url: URL | string, o: GetNodeInfoOptions) => Promise<unknown>;
    return lookup(url, { ...this.#remoteDefaults(), ...options });
  }

  lookupWebFinger(
    resource: URL | string,
    options: LookupWebFingerOptions = {},
  ): Promise<ResourceDescriptor | null> {
    return lookupWebFinger(resource, { ...this.#remoteDefaults(), ...options });
  }

  /** The federation's user agent, address policy and limits, for lookups. */
  #remoteDefaults() {
    const { userAgent, allowPrivateAddress, remoteRequests } = this.#host.options;
    return {
      userAgent,
      allowPrivateAddress,
      timeout: { milliseconds: remoteRequests.timeoutMs },
      maxBodyBytes: remoteRequests.maxBodyBytes,
      maxRedirects: remoteRequests.maxRedirects,
    };
  }

  clone(data: TContextData): Context<TContextData> {
    return new ContextImpl(this.#host, this.url, data);
  }

  async routeActivity(
    recipient: string | null,
    activity: Activity,
    options: RouteActivityOptions = {},
  ): Promise<boolean> {
    assertKnownOptions(options, ["immediate", "documentLoader", "contextLoader"], {
      where: "routeActivity()",
    });
    if (recipient != null && (typeof recipient !== "string" || recipient === "")) {
      throw new TypeError("The recipient of routeActivity() must be an identifier or null.");
    }
    const json = await activity.toJsonLd({
      contextLoader: options.contextLoader ?? this.contextLoader,
    }) as Record<string, unknown>;
    return await routeActivity(
      this.#host,
      {
        origin: this.origin,
        data: this.data,
        inboxUrl: () => recipient == null ? this.getInboxUri() : this.getInboxUri(recipient),
      },
      recipient,
      json,
      {
        documentLoader: options.documentLoader ?? this.documentLoader,
        immediate: options.immediate ?? false,
      },
    );
  }

  sendActivity(
    sender: SenderIdentity,
    recipients: Recipient | readonly Recipient[] | "followers",
    activity: Activity,
    options: SendActivityOptionsForCollection = {},
  ): Promise<void> {
    return sendActivity(this.#host.outbox, this, sender, recipients, activity, options);
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

  sendEvent<TEventData>(
    event: string,
    options: SendEventOptions<TEventData>,
  ): Promise<SendEventResult> {
    return this.#host.federation.sendEvent(event, options);
  }

  enqueueBatch<TData = null>(
    members: readonly BatchMember<TContextData>[],
    options: EnqueueBatchOptions<TContextData, TData>,
  ): Promise<BatchEnqueueResult> {
    return this.batchesOf().create(
      members,
      options as EnqueueBatchOptions<TContextData, unknown>,
      this.batchOrigin("batch"),
    );
  }

  /** The federation's batches.  Internal. */
  protected batchesOf(): FederationBatches<TContextData> {
    const batches = this.#host.batches;
    if (batches == null) throw new TypeError("This federation has no task batches.");
    return batches;
  }

  /**
   * Where an enqueue into a batch comes from; a task context derives ids
   * from its run.  Internal.
   * @param _kind `"batch"` for `enqueueBatch()`, `"add"` for `addToBatch()`.
   */
  protected batchOrigin(_kind: "batch" | "add"): BatchEnqueueOrigin {
    return {
      baseUrl: new URL("/", this.origin),
      enqueue: (prepared) => this.#host.taskEnqueuer.enqueue(prepared, { contextData: this.data }),
    };
  }

  async #enqueueTasks<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    payloads: readonly unknown[],
    options: TaskEnqueueOptions | TaskEnqueueManyOptions<unknown> | undefined,
  ): Promise<TaskEnqueueResult[]> {
    const { queues, taskQueueResolution } = this.#host.options;
    // The task enqueuer prepares the messages, holds deduplication keys and
    // hands them to the producer, which opens the enqueue span, stamps its
    // trace context into the messages and starts the workers.
    return await this.#host.taskEnqueuer.enqueuePayloads({
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
    }, { contextData: this.data });
  }
}
