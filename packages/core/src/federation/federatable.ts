import type { Activity, Actor, Object as APObject } from "@fedify/vocab";
import { parseUriTemplate } from "../activitypub/http/uri-template.ts";
import type {
  ActorDispatcher,
  ActorHandleMapper,
  ActorKeyPairsDispatcher,
  AuthorizePredicate,
  CollectionCounter,
  CollectionCursor,
  CollectionDispatcher,
  FollowerItem,
  InboxErrorHandler,
  InboxListener,
  NodeInfoDispatcher,
  ObjectAuthorizePredicate,
  ObjectDispatcher,
  OutboxPermanentFailureHandler,
  SharedInboxKeyDispatcher,
  WebFingerLinksDispatcher,
} from "./callbacks.ts";
import { DuplicateRegistrationError, RoutePathError } from "./errors.ts";
import type {
  ActivityClass,
  CollectionRegistration,
  FederationRegistry,
  IdempotencyStrategy,
  ObjectClass,
} from "./registry.ts";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { TaskDefinition } from "../tasks/definition.ts";
import type { TaskDefinitionOptions, TaskRegistry } from "./task-context.ts";

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
   * Sets how received activities are deduplicated by id: the same activity
   * received twice within a day runs the listeners once.  The record holds
   * the sender's origin too (the verified signer's), so that no server can
   * claim another's activity ids first; an activity without an id is
   * recognised by the SHA-256 digest of its body.  `"per-inbox"` by
   * default (an activity delivered to two personal inboxes runs once for
   * each); `"per-origin"` once per receiving origin; `"global"` once.
   * @param strategy The strategy.
   * @returns These setters, for chaining.
   * @throws {TypeError} When the strategy is unknown.
   * @since 0.2.0
   */
  withIdempotency(strategy: IdempotencyStrategy): InboxListenerSetters<TContextData>;

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
   * Restricts who may fetch actors: a request the predicate refuses gets
   * 401 (or `onUnauthorized`).
   * @param predicate Tells whether a request may see an actor.
   * @returns These setters, for chaining.
   * @throws {TypeError} When `predicate` is not a function.
   */
  authorize(predicate: AuthorizePredicate<TContextData>): ActorCallbackSetters<TContextData>;
}

/**
 * More settings of a collection route (outbox, followers, following).
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export interface CollectionCallbackSetters<TContextData> {
  /**
   * Sets the counter that gives the collection's `totalItems`.
   * @param counter Returns the number of items.
   * @returns These setters, for chaining.
   */
  setCounter(counter: CollectionCounter<TContextData>): CollectionCallbackSetters<TContextData>;
  /**
   * Makes the collection paged: the collection links to the first page,
   * whose cursor this returns.
   * @param cursor Returns the first page's cursor.
   * @returns These setters, for chaining.
   */
  setFirstCursor(cursor: CollectionCursor<TContextData>): CollectionCallbackSetters<TContextData>;
  /**
   * Sets the cursor of the last page the collection links to.
   * @param cursor Returns the last page's cursor.
   * @returns These setters, for chaining.
   */
  setLastCursor(cursor: CollectionCursor<TContextData>): CollectionCallbackSetters<TContextData>;
  /**
   * Restricts who may fetch the collection: a request the predicate refuses
   * gets 401 (or `onUnauthorized`).
   * @param predicate Tells whether a request may see the collection.
   * @returns These setters, for chaining.
   */
  authorize(predicate: AuthorizePredicate<TContextData>): CollectionCallbackSetters<TContextData>;
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
    dispatcher: CollectionDispatcher<Activity, TContextData>,
  ): CollectionCallbackSetters<TContextData>;

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
    dispatcher: CollectionDispatcher<Actor | URL, TContextData>,
  ): CollectionCallbackSetters<TContextData>;
}

/**
 * Checks a route path template.
 * @param path The path.
 * @param placeholder Whether it must contain exactly one `{identifier}`
 *                    (`true`) or none (`false`).
 * @param method The registration method, for the error message.
 * @throws {RoutePathError} When the path is malformed.
 * @since 0.1.0
 */
export function validateRoutePath(path: string, placeholder: boolean, method: string): void {
  if (typeof path !== "string" || !path.startsWith("/")) {
    throw new RoutePathError(
      String(path),
      `The path given to ${method}() must be a string starting with "/"; got ${
        JSON.stringify(path)
      }.`,
    );
  }
  const count = path.split("{identifier}").length - 1;
  const stripped = path.replaceAll("{identifier}", "");
  if (stripped.includes("{") || stripped.includes("}")) {
    throw new RoutePathError(
      path,
      `The path ${
        JSON.stringify(path)
      } given to ${method}() has a placeholder other than {identifier}.`,
    );
  }
  if (placeholder && count !== 1) {
    throw new RoutePathError(
      path,
      `The path ${
        JSON.stringify(path)
      } given to ${method}() must contain {identifier} exactly once; it has ${count}.`,
    );
  }
  if (!placeholder && count !== 0) {
    throw new RoutePathError(
      path,
      `The path ${JSON.stringify(path)} given to ${method}() must not contain {identifier}.`,
    );
  }
}

/**
 * The registration methods, implemented over a {@link FederationRegistry}.
 * Both the federation and the builder extend it.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export class FederatableImpl<TContextData> implements Federatable<TContextData> {
  /** What has been registered.  Internal. */
  readonly registry: FederationRegistry<TContextData>;

  /** @param registry The registry to register into. */
  constructor(registry: FederationRegistry<TContextData>) {
    this.registry = registry;
  }

  setActorDispatcher(
    path: string,
    dispatcher: ActorDispatcher<TContextData>,
  ): ActorCallbackSetters<TContextData> {
    validateRoutePath(path, true, "setActorDispatcher");
    assertCallback(dispatcher, "setActorDispatcher");
    if (this.registry.actor != null) {
      throw new DuplicateRegistrationError("actor dispatcher", "setActorDispatcher");
    }
    this.registry.routes.add("actor", path, "setActorDispatcher");
    const registry = this.registry;
    registry.actor = { path, dispatcher };
    // Each setter replaces the registration, so that a builder's copy made
    // in between keeps what it had.
    const setters: ActorCallbackSetters<TContextData> = {
      setKeyPairsDispatcher(keyPairsDispatcher) {
        assertCallback(keyPairsDispatcher, "setKeyPairsDispatcher");
        registry.actor = { ...registry.actor!, keyPairsDispatcher };
        return setters;
      },
      mapHandle(handleMapper) {
        assertCallback(handleMapper, "mapHandle");
        registry.actor = { ...registry.actor!, handleMapper };
        return setters;
      },
      authorize(authorize) {
        assertCallback(authorize, "authorize");
        registry.actor = { ...registry.actor!, authorize };
        return setters;
      },
    };
    return setters;
  }

  setObjectDispatcher<TObject extends APObject>(
    cls: ObjectClass<TObject>,
    path: string,
    dispatcher: ObjectDispatcher<TContextData, TObject>,
  ): ObjectCallbackSetters<TContextData> {
    if (typeof cls !== "function" || !(cls.typeId instanceof URL)) {
      throw new TypeError(
        "The first argument of setObjectDispatcher() must be a vocabulary class, e.g. Note.",
      );
    }
    assertCallback(dispatcher, "setObjectDispatcher");
    let variables: readonly string[];
    try {
      variables = parseUriTemplate(path).variables;
    } catch (error) {
      throw new RoutePathError(String(path), (error as Error).message);
    }
    if (variables.length === 0) {
      throw new RoutePathError(
        path,
        `The path ${JSON.stringify(path)} given to setObjectDispatcher() must have a variable, ` +
          'e.g. "/notes/{id}".',
      );
    }
    const typeId = cls.typeId.href;
    if (this.registry.objects.has(typeId)) {
      throw new DuplicateRegistrationError(
        `object dispatcher for ${cls.name}`,
        "setObjectDispatcher",
      );
    }
    const routeName = `object:${typeId}`;
    this.registry.routes.add(routeName, path, "setObjectDispatcher");
    const objects = this.registry.objects;
    objects.set(typeId, {
      path,
      cls,
      routeName,
      dispatcher: dispatcher as ObjectDispatcher<TContextData, APObject>,
    });
    const setters: ObjectCallbackSetters<TContextData> = {
      authorize(authorize) {
        assertCallback(authorize, "authorize");
        objects.set(typeId, { ...objects.get(typeId)!, authorize });
        return setters;
      },
    };
    return setters;
  }

  setNodeInfoDispatcher(path: string, dispatcher: NodeInfoDispatcher<TContextData>): void {
    validateRoutePath(path, false, "setNodeInfoDispatcher");
    assertCallback(dispatcher, "setNodeInfoDispatcher");
    if (this.registry.nodeInfo != null) {
      throw new DuplicateRegistrationError("NodeInfo dispatcher", "setNodeInfoDispatcher");
    }
    this.registry.routes.add("nodeinfo", path, "setNodeInfoDispatcher");
    this.registry.nodeInfo = { path, dispatcher };
  }

  setWebFingerLinksDispatcher(dispatcher: WebFingerLinksDispatcher<TContextData>): void {
    assertCallback(dispatcher, "setWebFingerLinksDispatcher");
    if (this.registry.webFingerLinks != null) {
      throw new DuplicateRegistrationError(
        "WebFinger links dispatcher",
        "setWebFingerLinksDispatcher",
      );
    }
    this.registry.webFingerLinks = dispatcher;
  }

  setOutboxPermanentFailureHandler(handler: OutboxPermanentFailureHandler<TContextData>): void {
    assertCallback(handler, "setOutboxPermanentFailureHandler");
    if (this.registry.outboxPermanentFailureHandler != null) {
      throw new DuplicateRegistrationError(
        "outbox permanent failure handler",
        "setOutboxPermanentFailureHandler",
      );
    }
    this.registry.outboxPermanentFailureHandler = handler;
  }

  setInboxListeners(
    inboxPath: string,
    sharedInboxPath?: string,
  ): InboxListenerSetters<TContextData> {
    validateRoutePath(inboxPath, true, "setInboxListeners");
    if (sharedInboxPath != null) validateRoutePath(sharedInboxPath, false, "setInboxListeners");
    if (this.registry.inboxPath != null) {
      throw new DuplicateRegistrationError("inbox listener set", "setInboxListeners");
    }
    this.registry.routes.add("inbox", inboxPath, "setInboxListeners");
    if (sharedInboxPath != null) {
      this.registry.routes.add("sharedInbox", sharedInboxPath, "setInboxListeners");
    }
    this.registry.inboxPath = inboxPath;
    this.registry.sharedInboxPath = sharedInboxPath;
    const registry = this.registry;
    const setters: InboxListenerSetters<TContextData> = {
      on(type, listener) {
        if (typeof type !== "function") {
          throw new TypeError("The first argument of on() must be an activity class, e.g. Follow.");
        }
        assertCallback(listener, "on");
        if (registry.inboxListeners.has(type)) {
          throw new DuplicateRegistrationError(`inbox listener for ${type.name}`, "on");
        }
        registry.inboxListeners.set(type, listener as InboxListener<TContextData, Activity>);
        return setters;
      },
      onError(handler) {
        assertCallback(handler, "onError");
        registry.inboxErrorHandler = handler;
        return setters;
      },
      withIdempotency(strategy) {
        if (strategy !== "per-inbox" && strategy !== "per-origin" && strategy !== "global") {
          throw new TypeError(
            'withIdempotency() takes "per-inbox", "per-origin" or "global"; got ' +
              `${JSON.stringify(strategy)}.`,
          );
        }
        registry.inboxIdempotency = strategy;
        return setters;
      },
      setSharedKeyDispatcher(dispatcher) {
        assertCallback(dispatcher, "setSharedKeyDispatcher");
        registry.sharedKeyDispatcher = dispatcher;
        return setters;
      },
    };
    return setters;
  }

  setOutboxDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Activity, TContextData>,
  ): CollectionCallbackSetters<TContextData> {
    return this.#setCollection("outbox", "setOutboxDispatcher", path, dispatcher);
  }

  setFollowersDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<FollowerItem, TContextData>,
  ): CollectionCallbackSetters<TContextData> {
    return this.#setCollection("followers", "setFollowersDispatcher", path, dispatcher);
  }

  setFollowingDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Actor | URL, TContextData>,
  ): CollectionCallbackSetters<TContextData> {
    return this.#setCollection("following", "setFollowingDispatcher", path, dispatcher);
  }

  #setCollection<TItem>(
    name: "outbox" | "followers" | "following",
    method: string,
    path: string,
    dispatcher: CollectionDispatcher<TItem, TContextData>,
  ): CollectionCallbackSetters<TContextData> {
    validateRoutePath(path, true, method);
    assertCallback(dispatcher, method);
    if (this.registry[name] != null) {
      throw new DuplicateRegistrationError(`${name} dispatcher`, method);
    }
    this.registry.routes.add(name, path, method);
    const registry = this.registry as unknown as Record<
      string,
      CollectionRegistration<TItem, TContextData>
    >;
    registry[name] = { path, dispatcher };
    const update = (
      method: string,
      change: Partial<CollectionRegistration<TItem, TContextData>>,
    ) => {
      assertCallback(Object.values(change)[0], method);
      registry[name] = { ...registry[name], ...change };
      return setters;
    };
    const setters: CollectionCallbackSetters<TContextData> = {
      setCounter: (counter) => update("setCounter", { counter }),
      setFirstCursor: (firstCursor) => update("setFirstCursor", { firstCursor }),
      setLastCursor: (lastCursor) => update("setLastCursor", { lastCursor }),
      authorize: (authorize) => update("authorize", { authorize }),
    };
    return setters;
  }

  defineTask<TSchema extends StandardSchemaV1>(
    name: string,
    options: TaskDefinitionOptions<TContextData, TSchema>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>
  > {
    return this.registry.tasks.defineTask(name, options);
  }
}

function assertCallback(callback: unknown, method: string): void {
  if (typeof callback !== "function") {
    throw new TypeError(`The callback given to ${method}() must be a function.`);
  }
}
