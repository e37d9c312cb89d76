// What a federation or builder holds for each registration, and the types
// of the registered classes: interfaces only (registry.ts creates and
// copies registries).
import type { Activity, Actor, Hashtag, Object as APObject } from "@fedify/vocab";
import type { TaskStore } from "../tasks/registry.ts";
import type {
  ActorAliasMapper,
  ActorDispatcher,
  ActorHandleMapper,
  ActorKeyPairsDispatcher,
  AuthorizePredicate,
  CollectionCounter,
  CollectionCursor,
  CollectionDispatcher,
  CustomCollectionCounter,
  CustomCollectionCursor,
  CustomCollectionDispatcher,
  FollowerItem,
  InboxErrorHandler,
  InboxListener,
  NodeInfoDispatcher,
  ObjectAuthorizePredicate,
  ObjectDispatcher,
  OutboxListener,
  OutboxListenerErrorHandler,
  OutboxPermanentFailureHandler,
  SharedInboxKeyDispatcher,
  UnverifiedActivityHandler,
  WebFingerLinksDispatcher,
} from "./callbacks.ts";
import type { Context, InboxContext, RequestContext, TaskContext } from "./context-api.ts";
import type { RouteTable } from "../activitypub/http/route-table.ts";
import type { ActivityClass } from "../activitypub/inbox/listeners.ts";
import type { IdempotencyStrategy } from "../activitypub/inbox/idempotency.ts";

/**
 * A registered route: its path template and the callback serving it.
 * @since 0.1.0
 */
export interface RouteRegistration<TCallback> {
  /** The path template, e.g. `/users/{identifier}`. */
  readonly path: string;
  /** The callback serving the route. */
  readonly dispatcher: TCallback;
}

/**
 * The actor route with what its setters added.
 * @since 0.2.0
 */
export interface ActorRegistration<TContextData>
  extends RouteRegistration<ActorDispatcher<TContextData>> {
  readonly keyPairsDispatcher?: ActorKeyPairsDispatcher<TContextData>;
  readonly handleMapper?: ActorHandleMapper<TContextData>;
  /** Since 0.3.0. */
  readonly aliasMapper?: ActorAliasMapper<TContextData>;
  readonly authorize?: AuthorizePredicate<TContextData>;
}

/**
 * A collection route with what its setters added.
 * @since 0.2.0
 */
export interface CollectionRegistration<
  TItem,
  TContextData,
  TContext extends Context<TContextData> = Context<TContextData>,
> extends RouteRegistration<CollectionDispatcher<TItem, TContextData, TContext>> {
  readonly counter?: CollectionCounter<TContextData, TContext>;
  readonly firstCursor?: CollectionCursor<TContextData, TContext>;
  readonly lastCursor?: CollectionCursor<TContextData, TContext>;
  readonly authorize?: AuthorizePredicate<TContextData>;
}

/**
 * A custom collection route (`setCollectionDispatcher()`,
 * `setOrderedCollectionDispatcher()`) with what its setters added.
 * @since 0.3.0
 */
export interface CustomCollectionRegistration<TContextData> extends
  RouteRegistration<
    CustomCollectionDispatcher<unknown, string, RequestContext<TContextData>, TContextData>
  > {
  /** The name given at registration. */
  readonly name: string | symbol;
  /** The item class given at registration, e.g. `Note`. */
  readonly itemType: ObjectClass;
  /** Whether it is served as an `OrderedCollection`. */
  readonly ordered: boolean;
  /** The route's name in the route table: `collection:<n>`. */
  readonly routeName: string;
  readonly counter?: CustomCollectionCounter<string, TContextData>;
  readonly firstCursor?: CustomCollectionCursor<string, RequestContext<TContextData>, TContextData>;
  readonly lastCursor?: CustomCollectionCursor<string, RequestContext<TContextData>, TContextData>;
  readonly authorize?: ObjectAuthorizePredicate<TContextData>;
}

/**
 * An object route.
 * @since 0.2.0
 */
export interface ObjectRegistration<TContextData>
  extends RouteRegistration<ObjectDispatcher<TContextData, APObject>> {
  /** The class, e.g. `Note`. */
  readonly cls: ObjectClass;
  /** The route's name in the route table: `object:<type URI>`. */
  readonly routeName: string;
  readonly authorize?: ObjectAuthorizePredicate<TContextData>;
}

export type { ActivityClass };

/**
 * A vocabulary class with a type URI, as accepted by
 * `setObjectDispatcher()` (e.g. `Note`).
 * @since 0.2.0
 */
export type ObjectClass<TObject extends APObject = APObject> =
  // deno-lint-ignore no-explicit-any
  & (new (...args: any[]) => TObject)
  & { readonly typeId: URL };

export type { IdempotencyStrategy };

/**
 * Returns the key that identifies a received activity for deduplication,
 * in place of an {@link IdempotencyStrategy}, or `null` not to deduplicate
 * it.  Called in the inbox request, after its signature was verified.
 * The key is recorded together with the sender's origin, so that two
 * servers cannot collide.
 * @typeParam TContextData The context data type.
 * @param ctx The inbox context (`recipient` is set).
 * @param activity The activity.
 * @returns The key, or `null`.
 * @since 0.3.0
 */
export type IdempotencyKeyCallback<TContextData> = (
  ctx: InboxContext<TContextData>,
  activity: Activity,
) => string | null | Promise<string | null>;

/**
 * Everything registered on a federation or builder.  Internal: the builder
 * copies it on `build()` with `cloneRegistry()` (registry.ts), so every field must be
 * immutable, a `Map`/`Set` (copied one level deep) or an object with a
 * `clone()` method.  To add a registration kind (e.g. tasks), add a field
 * here and initialize it in `createRegistry()`.
 * @since 0.1.0
 */
export interface FederationRegistry<TContextData> {
  /** Every route's path template, for routing and building URIs. */
  readonly routes: RouteTable;
  actor?: ActorRegistration<TContextData>;
  inboxPath?: string;
  sharedInboxPath?: string;
  inboxIdempotency?: IdempotencyStrategy | IdempotencyKeyCallback<TContextData>;
  sharedKeyDispatcher?: SharedInboxKeyDispatcher<TContextData>;
  readonly inboxListeners: Map<ActivityClass, InboxListener<TContextData, Activity>>;
  inboxErrorHandler?: InboxErrorHandler<TContextData>;
  /** Since 0.3.0. */
  unverifiedActivityHandler?: UnverifiedActivityHandler<TContextData>;
  outbox?: CollectionRegistration<Activity, TContextData, RequestContext<TContextData>>;
  followers?: CollectionRegistration<FollowerItem, TContextData>;
  following?: CollectionRegistration<Actor | URL, TContextData, RequestContext<TContextData>>;
  /** The inbox collection, served on GET at the inbox path (since 0.3.0). */
  inboxCollection?: CollectionRegistration<Activity, TContextData, RequestContext<TContextData>>;
  /** Since 0.3.0. */
  liked?: CollectionRegistration<APObject | URL, TContextData, RequestContext<TContextData>>;
  /** Since 0.3.0. */
  featured?: CollectionRegistration<APObject, TContextData, RequestContext<TContextData>>;
  /** Since 0.3.0. */
  featuredTags?: CollectionRegistration<Hashtag, TContextData, RequestContext<TContextData>>;
  /** Custom collections, by name (since 0.3.0). */
  readonly collections: Map<string | symbol, CustomCollectionRegistration<TContextData>>;
  /** Object routes, by the class's type URI. */
  readonly objects: Map<string, ObjectRegistration<TContextData>>;
  nodeInfo?: RouteRegistration<NodeInfoDispatcher<TContextData>>;
  webFingerLinks?: WebFingerLinksDispatcher<TContextData>;
  outboxPermanentFailureHandler?: OutboxPermanentFailureHandler<TContextData>;
  /** The outbox listeners' path, `setOutboxListeners()` (since 0.4.0). */
  outboxListenerPath?: string;
  /** The outbox listeners, by activity class (since 0.4.0). */
  readonly outboxListeners: Map<ActivityClass, OutboxListener<TContextData, Activity>>;
  /** Since 0.4.0. */
  outboxErrorHandler?: OutboxListenerErrorHandler<TContextData>;
  /** Who may POST to an outbox (since 0.4.0). */
  outboxAuthorize?: (
    context: RequestContext<TContextData>,
    identifier: string,
  ) => boolean | Promise<boolean>;
  /** The typed background tasks, by name. */
  readonly tasks: TaskStore<TContextData, TaskContext<TContextData>>;
}
