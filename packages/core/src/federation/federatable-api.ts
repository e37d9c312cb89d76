// The registration methods a federation and its builder share, and the
// setters they return: interfaces only (federatable.ts implements them).
import type { Activity, Actor, Hashtag, Object as APObject } from "@fedify/vocab";
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
import type { Context, RequestContext, TaskRegistry } from "./context-api.ts";
import type {
  ActivityClass,
  IdempotencyKeyCallback,
  IdempotencyStrategy,
  ObjectClass,
} from "./registry-api.ts";

/**
 * Registers inbox listeners, as returned by
 * {@link Federatable.setInboxListeners}.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export interface InboxListenerSetters<TContextData> {
  /**
   * Registers the listener for an activity class.  A received activity goes
   * to the listener of its own class or, failing that, of its nearest
   * superclass (so `on(Activity, …)` catches everything else).
   * @param type The activity class, e.g. `Follow`.
   * @param listener The listener.
   * @returns These setters, for chaining.
   * @throws {DuplicateRegistrationError} When the class already has one.
   */
  on<TActivity extends Activity>(
    type: ActivityClass<TActivity>,
    listener: InboxListener<TContextData, TActivity>,
  ): InboxListenerSetters<TContextData>;

  /**
   * Registers the handler called when a listener throws.
   * @param handler The error handler.
   * @returns These setters, for chaining.
   */
  onError(handler: InboxErrorHandler<TContextData>): InboxListenerSetters<TContextData>;

  /**
   * Registers the hook that sees activities whose HTTP signature is missing
   * or fails, before the inbox answers 401 (`onUnauthorized`); it may answer
   * otherwise.  The listeners never see them.  The body of an unsigned
   * request is read for it (within `inboxMaxBytes`); an activity that is
   * not a JSON object or cannot be parsed as an `Activity` skips the hook.
   * A hook that throws is logged and the inbox answers 401.
   * @param handler The hook.
   * @returns These setters, for chaining.
   * @throws {DuplicateRegistrationError} When one is already registered.
   * @since 0.3.0
   */
  onUnverifiedActivity(
    handler: UnverifiedActivityHandler<TContextData>,
  ): InboxListenerSetters<TContextData>;

  /**
   * Sets how received activities are deduplicated by id: the same activity
   * received twice within a day runs the listeners once.  The record holds
   * the sender's origin too (the verified signer's), so that no server can
   * claim another's activity ids first; an activity without an id is
   * recognised by the SHA-256 digest of its body.  `"per-inbox"` by
   * default (an activity delivered to two personal inboxes runs once for
   * each); `"per-origin"` once per receiving origin; `"global"` once.  A
   * callback (since 0.3.0) returns the key itself, or `null` not to
   * deduplicate; see {@link IdempotencyKeyCallback}.
   * @param strategy The strategy, or a callback.
   * @returns These setters, for chaining.
   * @throws {TypeError} When the strategy is unknown.
   * @since 0.2.0
   */
  withIdempotency(
    strategy: IdempotencyStrategy | IdempotencyKeyCallback<TContextData>,
  ): InboxListenerSetters<TContextData>;

  /**
   * Names the actor (typically an instance actor) whose key signs the GETs
   * an inbox makes to fetch senders' keys, for servers that answer only
   * signed requests (authorized fetch, Mastodon's secure mode).  Without
   * it, keys are fetched unsigned.
   * @param dispatcher Returns the actor's identifier, or `null` to fetch
   *                   unsigned.
   * @returns These setters, for chaining.
   * @since 0.2.0
   */
  setSharedKeyDispatcher(
    dispatcher: SharedInboxKeyDispatcher<TContextData>,
  ): InboxListenerSetters<TContextData>;
}

/**
 * More settings of the actor route, as returned by
 * {@link Federatable.setActorDispatcher}.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export interface ActorCallbackSetters<TContextData> {
  /**
   * Sets where actors' key pairs come from: deliveries are signed with
   * them, and `ctx.getActorKeyPairs()` returns them.
   * @param dispatcher Returns an actor's key pairs.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `dispatcher` is not a function.
   */
  setKeyPairsDispatcher(
    dispatcher: ActorKeyPairsDispatcher<TContextData>,
  ): ActorCallbackSetters<TContextData>;

  /**
   * Maps WebFinger usernames to identifiers, for handles that differ from
   * identifiers (e.g. identifiers are database ids).  Without it, the
   * username is the identifier.
   * @param mapper Returns the identifier of a username, or `null`.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `mapper` is not a function.
   */
  mapHandle(mapper: ActorHandleMapper<TContextData>): ActorCallbackSetters<TContextData>;

  /**
   * Lets WebFinger resolve other resources to actors, as Fedify's does: a
   * resource that is neither a handle nor an actor's URI (say, a profile
   * page's URL) goes to the mapper, and the JRD answers for the actor it
   * names.  Without it, such resources get 404.
   * @param mapper Returns the actor's identifier or username, or `null`.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `mapper` is not a function.
   * @since 0.3.0
   */
  mapAlias(mapper: ActorAliasMapper<TContextData>): ActorCallbackSetters<TContextData>;

  /**
   * Serves one actor at a fixed path as well, Fedify's setter of the same
   * name: an instance actor at `/actor` for a relay, a bot at `/bot`.
   * `ctx.getActorUri(identifier)` then gives that path (so the actor's id,
   * WebFinger's link and `parseUri()` all agree on it), and the actor is
   * still served at its templated path.
   * @param path The fixed path, starting with `/`, with no variables.
   * @param identifier The actor's identifier, handed to the dispatcher.
   * @returns These setters, for chaining.
   * @throws {RoutePathError} When the path is malformed or has variables.
   * @throws {RouteConflictError} When another route could match the path.
   * @throws {DuplicateRegistrationError} When the identifier already has an
   *         alias.
   * @throws {TypeError} When the identifier is not a non-empty string.
   * @since 0.4.0
   * @example
   * ```ts
   * import { createFederation, MemoryKvStore } from "@fedwork/core";
   * import { Application } from "@fedify/vocab";
   *
   * const federation = createFederation<void>({ kv: new MemoryKvStore() });
   * federation
   *   .setActorDispatcher("/users/{identifier}", (ctx, identifier) =>
   *     identifier === "instance"
   *       ? new Application({ id: ctx.getActorUri(identifier), preferredUsername: "relay" })
   *       : null)
   *   .mapActorAlias("/actor", "instance");
   * ```
   */
  mapActorAlias(path: `/${string}`, identifier: string): ActorCallbackSetters<TContextData>;

  /**
   * Restricts who may fetch actors: a request the predicate refuses gets
   * 401 (or `onUnauthorized`).
   * @param predicate Tells whether a request may see an actor.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `predicate` is not a function.
   */
  authorize(predicate: AuthorizePredicate<TContextData>): ActorCallbackSetters<TContextData>;
}

/**
 * More settings of an actor's collection route (outbox, inbox, followers,
 * following, liked, featured, featured tags).
 * @typeParam TContextData The context data type.
 * @typeParam TContext The context the callbacks get (since 0.3.0).
 * @since 0.2.0
 */
export interface CollectionCallbackSetters<
  TContextData,
  TContext extends Context<TContextData> = Context<TContextData>,
> {
  /**
   * Sets the counter that gives the collection's `totalItems`.
   * @param counter Returns the number of items.
   * @returns These setters, for chaining.
   */
  setCounter(
    counter: CollectionCounter<TContextData, TContext>,
  ): CollectionCallbackSetters<TContextData, TContext>;
  /**
   * Makes the collection paged: the collection links to the first page,
   * whose cursor this returns.
   * @param cursor Returns the first page's cursor.
   * @returns These setters, for chaining.
   */
  setFirstCursor(
    cursor: CollectionCursor<TContextData, TContext>,
  ): CollectionCallbackSetters<TContextData, TContext>;
  /**
   * Sets the cursor of the last page the collection links to.
   * @param cursor Returns the last page's cursor.
   * @returns These setters, for chaining.
   */
  setLastCursor(
    cursor: CollectionCursor<TContextData, TContext>,
  ): CollectionCallbackSetters<TContextData, TContext>;
  /**
   * Restricts who may fetch the collection: a request the predicate refuses
   * gets 401 (or `onUnauthorized`) before the dispatcher runs.
   * @param predicate Tells whether a request may see the collection.
   * @returns These setters, for chaining.
   */
  authorize(
    predicate: AuthorizePredicate<TContextData>,
  ): CollectionCallbackSetters<TContextData, TContext>;
}

/**
 * More settings of a custom collection route, as returned by
 * {@link Federatable.setCollectionDispatcher}: the same as an actor
 * collection's, given the values of the path's variables instead of an
 * identifier.  Fedify's type, with its type parameters in its order.
 * @typeParam TParam The names of the path's variables.
 * @typeParam TContext The context the callbacks get (a `RequestContext`).
 * @typeParam TContextData The context data type.
 * @since 0.3.0
 */
export interface CustomCollectionCallbackSetters<
  TParam extends string,
  TContext extends Context<TContextData>,
  TContextData,
> {
  /**
   * Sets the counter that gives the collection's `totalItems`.
   * @param counter Returns the number of items.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `counter` is not a function.
   */
  setCounter(
    counter: CustomCollectionCounter<TParam, TContextData>,
  ): CustomCollectionCallbackSetters<TParam, TContext, TContextData>;
  /**
   * Makes the collection paged: the collection links to the first page,
   * whose cursor this returns (`null`: not paged for these values).
   * @param cursor Returns the first page's cursor.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `cursor` is not a function.
   */
  setFirstCursor(
    cursor: CustomCollectionCursor<TParam, TContext, TContextData>,
  ): CustomCollectionCallbackSetters<TParam, TContext, TContextData>;
  /**
   * Sets the cursor of the last page the collection links to.
   * @param cursor Returns the last page's cursor.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `cursor` is not a function.
   */
  setLastCursor(
    cursor: CustomCollectionCursor<TParam, TContext, TContextData>,
  ): CustomCollectionCallbackSetters<TParam, TContext, TContextData>;
  /**
   * Restricts who may fetch the collection: a request the predicate refuses
   * gets 401 (or `onUnauthorized`) before the dispatcher runs.
   * @param predicate Tells whether a request may see the collection.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `predicate` is not a function.
   */
  authorize(
    predicate: ObjectAuthorizePredicate<TContextData>,
  ): CustomCollectionCallbackSetters<TParam, TContext, TContextData>;
}

/**
 * More settings of an object route.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export interface ObjectCallbackSetters<TContextData> {
  /**
   * Restricts who may fetch the objects: a request the predicate refuses
   * gets 401 (or `onUnauthorized`).
   * @param predicate Tells whether a request may see an object.
   * @returns These setters, for chaining.
   */
  authorize(predicate: ObjectAuthorizePredicate<TContextData>): ObjectCallbackSetters<TContextData>;
}

/**
 * The registration methods shared by {@link Federation} and
 * {@link FederationBuilder}, including `defineTask()` from
 * {@link TaskRegistry}.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @since 0.1.0
 */
export interface Federatable<TContextData> extends TaskRegistry<TContextData> {
  /**
   * Registers the actor dispatcher and the actor route.  Actors are served
   * there as `application/activity+json` and found through
   * `/.well-known/webfinger`.
   * @param path The path template, with one `{identifier}` placeholder,
   *             e.g. `"/users/{identifier}"`.
   * @param dispatcher Returns the actor for an identifier.
   * @returns Setters for the key pairs dispatcher, the handle mapper and
   *          the authorization predicate (since 0.2.0).
   * @throws {RoutePathError} When the path is malformed.
   * @throws {RouteConflictError} When the path could match another route's.
   * @throws {DuplicateRegistrationError} When already registered.
   * @example
   * ```ts
   * federation.setActorDispatcher("/users/{identifier}", (ctx, identifier) =>
   *   new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier }))
   *   .setKeyPairsDispatcher((ctx, identifier) => loadKeyPairs(identifier));
   * ```
   */
  setActorDispatcher(
    path: string,
    dispatcher: ActorDispatcher<TContextData>,
  ): ActorCallbackSetters<TContextData>;

  /**
   * Registers an object dispatcher: objects of a class served at a path
   * whose variables the dispatcher gets, and built by
   * `ctx.getObjectUri(cls, values)`.
   * @param cls The class, e.g. `Note`.
   * @param path The path template, with at least one variable, e.g.
   *             `"/users/{identifier}/notes/{id}"`.
   * @param dispatcher Returns the object for the path's values.
   * @returns Setters for the authorization predicate.
   * @throws {RoutePathError} When the path is malformed or has no variable.
   * @throws {RouteConflictError} When the path could match another route's.
   * @throws {DuplicateRegistrationError} When the class already has one.
   * @since 0.2.0
   */
  setObjectDispatcher<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    path: string,
    dispatcher: ObjectDispatcher<TContextData, TObject>,
  ): ObjectCallbackSetters<TContextData>;

  /**
   * Registers the NodeInfo 2.1 document's path and dispatcher;
   * `/.well-known/nodeinfo` then links to it.
   * @param path The path, without variables, e.g. `"/nodeinfo/2.1"`.
   * @param dispatcher Returns the metadata.
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.2.0
   */
  setNodeInfoDispatcher(path: string, dispatcher: NodeInfoDispatcher<TContextData>): void;

  /**
   * Registers more links for actors' WebFinger answers.
   * @param dispatcher Returns the links for a resource.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.2.0
   */
  setWebFingerLinksDispatcher(dispatcher: WebFingerLinksDispatcher<TContextData>): void;

  /**
   * Registers the handler called once when a delivery fails for good (the
   * inbox answered one of `permanentFailureStatusCodes`, 404 and 410 by
   * default), e.g. to remove the followers behind that inbox.
   * @param handler The handler.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.2.0
   * @example
   * ```ts
   * federation.setOutboxPermanentFailureHandler((ctx, { inbox, statusCode, actorIds }) => {
   *   for (const id of actorIds) removeFollower(id);
   * });
   * ```
   */
  setOutboxPermanentFailureHandler(handler: OutboxPermanentFailureHandler<TContextData>): void;

  /**
   * Registers the inbox routes; add listeners with the returned setters.
   * @param inboxPath The personal inbox path, with one `{identifier}`
   *                  placeholder.
   * @param sharedInboxPath The shared inbox path, without placeholders.
   * @returns Setters for the listeners.
   * @throws {RoutePathError} When a path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setInboxListeners(
    inboxPath: string,
    sharedInboxPath?: string,
  ): InboxListenerSetters<TContextData>;

  /**
   * Registers the outbox collection dispatcher and route.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of the outbox.
   * @returns Setters for the counter, cursors and authorization (since 0.2.0).
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setOutboxDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Activity, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>>;

  /**
   * Listens to activities POSTed to actors' outboxes (ActivityPub's
   * client-to-server protocol), as Fedify's method of the same name: a
   * POST is authorized by `authorize()`, read within `inboxMaxBytes`,
   * refused unless its actor is the outbox's owner, and handed to the
   * listener for its class, which usually sends it on with
   * `ctx.sendActivity({ identifier: ctx.identifier }, …)`.  The answer is
   * 202, or 400, 401, 404, 413 or 500 as Fedify answers.
   * @param outboxPath The outbox path, with one `{identifier}`; the outbox
   *                   dispatcher's, if there is one.
   * @returns Setters for the listeners, the error handler and
   *          `authorize()`.
   * @throws {RoutePathError} When the path is malformed or differs from
   *         the outbox dispatcher's.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.4.0
   * @example
   * ```ts
   * import { createFederation, MemoryKvStore } from "@fedwork/core";
   * import { Create } from "@fedify/vocab";
   *
   * const federation = createFederation<void>({ kv: new MemoryKvStore() });
   * federation
   *   .setOutboxListeners("/users/{identifier}/outbox")
   *   .authorize((ctx, identifier) =>
   *     ctx.request.headers.get("authorization") === `Bearer token-of-${identifier}`
   *   )
   *   .on(Create, async (ctx, create) => {
   *     await ctx.sendActivity({ identifier: ctx.identifier }, "followers", create);
   *   });
   * ```
   */
  setOutboxListeners(outboxPath: string): OutboxListenerSetters<TContextData>;

  /**
   * Registers the followers collection dispatcher and route.  Also what
   * `sendActivity(sender, "followers", …)` enumerates.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of followers (anything with an inbox).
   * @returns Setters for the counter, cursors and authorization (since 0.2.0).
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setFollowersDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<FollowerItem, TContextData>,
  ): CollectionCallbackSetters<TContextData>;

  /**
   * Registers the following collection dispatcher and route.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of followed actors or their URIs.
   * @returns Setters for the counter, cursors and authorization (since 0.2.0).
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setFollowingDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Actor | URL, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>>;

  /**
   * Registers the inbox collection dispatcher: the inbox is then served on
   * GET at the inbox path, which still takes POSTs for the inbox listeners.
   * @param path The path template, with one `{identifier}` placeholder;
   *             the same as `setInboxListeners()`'s, whichever comes first.
   * @param dispatcher Returns a page of received activities.
   * @returns Setters for the counter, cursors and authorization.
   * @throws {RoutePathError} When the path is malformed or not the inbox
   *         listeners' path.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.3.0
   */
  setInboxDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Activity, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>>;

  /**
   * Registers the liked collection dispatcher and route; put
   * `ctx.getLikedUri(identifier)` on the actor as `liked`.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of liked objects or their URIs.
   * @returns Setters for the counter, cursors and authorization.
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.3.0
   */
  setLikedDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<APObject | URL, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>>;

  /**
   * Registers the featured (pinned posts) collection dispatcher and route;
   * put `ctx.getFeaturedUri(identifier)` on the actor as `featured`.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of featured objects.
   * @returns Setters for the counter, cursors and authorization.
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.3.0
   */
  setFeaturedDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<APObject, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>>;

  /**
   * Registers the featured tags collection dispatcher and route; put
   * `ctx.getFeaturedTagsUri(identifier)` on the actor as `featuredTags`.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of `Hashtag`s.
   * @returns Setters for the counter, cursors and authorization.
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   * @since 0.3.0
   */
  setFeaturedTagsDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Hashtag, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>>;

  /**
   * Registers a custom collection, served as a `Collection` (its pages as
   * `CollectionPage`s) at a path with any variables, e.g. the posts under a
   * hashtag; `ctx.getCollectionUri(name, values)` builds its URI.
   * @param name The collection's name, unique among custom collections.
   * @param itemType The class of its items, e.g. `Note`.
   * @param path The path template, with at least one variable, e.g.
   *             `"/users/{identifier}/tags/{tag}"`.
   * @param dispatcher Returns the collection or a page for the path's
   *                   values, or `null`.
   * @returns Setters for the counter, cursors and authorization.
   * @throws {RoutePathError} When the path is malformed or has no variable.
   * @throws {RouteConflictError} When the path could match another route's.
   * @throws {DuplicateRegistrationError} When the name is taken.
   * @throws {TypeError} When `itemType` is not a vocabulary class or
   *         `dispatcher` not a function.
   * @since 0.3.0
   * @example
   * ```ts
   * federation.setCollectionDispatcher(
   *   "tagged",
   *   Note,
   *   "/users/{identifier}/tags/{tag}",
   *   (ctx, values, cursor) => ({ items: findNotes(values.identifier, values.tag) }),
   * ).setCounter((ctx, values) => countNotes(values.identifier, values.tag));
   * ```
   */
  setCollectionDispatcher<TObject extends APObject, TParam extends string>(
    name: string | symbol,
    itemType: ObjectClass<TObject>,
    path: string,
    dispatcher: CustomCollectionDispatcher<
      TObject | URL,
      TParam,
      RequestContext<TContextData>,
      TContextData
    >,
  ): CustomCollectionCallbackSetters<TParam, RequestContext<TContextData>, TContextData>;

  /**
   * Registers a custom collection served as an `OrderedCollection` (its
   * pages as `OrderedCollectionPage`s); otherwise as
   * {@link Federatable.setCollectionDispatcher}.
   * @param name The collection's name, unique among custom collections.
   * @param itemType The class of its items, e.g. `Note`.
   * @param path The path template, with at least one variable.
   * @param dispatcher Returns the collection or a page for the path's
   *                   values, or `null`.
   * @returns Setters for the counter, cursors and authorization.
   * @throws {RoutePathError} When the path is malformed or has no variable.
   * @throws {RouteConflictError} When the path could match another route's.
   * @throws {DuplicateRegistrationError} When the name is taken.
   * @throws {TypeError} When `itemType` is not a vocabulary class or
   *         `dispatcher` not a function.
   * @since 0.3.0
   */
  setOrderedCollectionDispatcher<TObject extends APObject, TParam extends string>(
    name: string | symbol,
    itemType: ObjectClass<TObject>,
    path: string,
    dispatcher: CustomCollectionDispatcher<
      TObject | URL,
      TParam,
      RequestContext<TContextData>,
      TContextData
    >,
  ): CustomCollectionCallbackSetters<TParam, RequestContext<TContextData>, TContextData>;
}

/**
 * The setters `setOutboxListeners()` returns, Fedify's interface of the
 * same name.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface OutboxListenerSetters<TContextData> {
  /**
   * Registers the listener for an activity class (and its subclasses that
   * have none of their own).
   * @param type The activity class, e.g. `Create`.
   * @param listener The listener.
   * @returns These setters.
   * @throws {DuplicateRegistrationError} When the class has a listener.
   * @throws {TypeError} When an argument is not a class or a function.
   */
  on<TActivity extends Activity>(
    type: ActivityClass<TActivity>,
    listener: OutboxListener<TContextData, TActivity>,
  ): OutboxListenerSetters<TContextData>;
  /**
   * Sets the handler of parse failures and listener errors.
   * @param handler The handler.
   * @returns These setters.
   * @throws {TypeError} When it is not a function.
   */
  onError(handler: OutboxListenerErrorHandler<TContextData>): OutboxListenerSetters<TContextData>;
  /**
   * Decides who may POST to an outbox (an app's OAuth bearer token, a
   * session): a POST it refuses gets 401 (or `onUnauthorized`).  Without
   * it, **anyone may post as your actors**.
   * @param predicate Tells whether the request may post to `identifier`'s
   *                  outbox.
   * @returns These setters.
   * @throws {TypeError} When it is not a function.
   */
  authorize(predicate: AuthorizePredicate<TContextData>): OutboxListenerSetters<TContextData>;
}
