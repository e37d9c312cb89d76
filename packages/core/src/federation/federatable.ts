import type { Activity, Actor, Hashtag, Object as APObject } from "@fedify/vocab";
import { parseUriTemplate } from "../activitypub/http/uri-template.ts";
import { ACTOR_ALIAS_PREFIX } from "../activitypub/http/route-table.ts";
import { registerOutboxListeners } from "./outbox-listeners.ts";
import type {
  ActorDispatcher,
  CollectionDispatcher,
  CustomCollectionDispatcher,
  FollowerItem,
  InboxListener,
  NodeInfoDispatcher,
  ObjectDispatcher,
  OutboxPermanentFailureHandler,
  WebFingerLinksDispatcher,
} from "./callbacks.ts";
import { DuplicateRegistrationError, RoutePathError } from "./errors.ts";
import type { FederationRegistry, ObjectClass } from "./registry-api.ts";
import {
  type ActorCollectionName,
  checkSharedInboxRoute,
  registerActorCollection,
  registerCustomCollection,
} from "../activitypub/collections/register.ts";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { TaskDefinition } from "../tasks/definition.ts";
import type { TaskResultValue } from "../tasks/result.ts";
import type {
  Context,
  RequestContext,
  TaskDefinitionManyOptions,
  TaskDefinitionOptions,
} from "./context-api.ts";
import type {
  ActorCallbackSetters,
  CollectionCallbackSetters,
  CustomCollectionCallbackSetters,
  Federatable,
  InboxListenerSetters,
  ObjectCallbackSetters,
  OutboxListenerSetters,
} from "./federatable-api.ts";

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
      mapAlias(aliasMapper) {
        assertCallback(aliasMapper, "mapAlias");
        registry.actor = { ...registry.actor!, aliasMapper };
        return setters;
      },
      mapActorAlias(aliasPath, identifier) {
        if (typeof identifier !== "string" || identifier === "") {
          throw new TypeError(
            "The identifier given to mapActorAlias() must be a non-empty string.",
          );
        }
        validateRoutePath(aliasPath, false, "mapActorAlias");
        const name = `${ACTOR_ALIAS_PREFIX}${identifier}`;
        if (registry.routes.has(name)) {
          throw new DuplicateRegistrationError(
            `actor alias for ${JSON.stringify(identifier)}`,
            "mapActorAlias",
          );
        }
        registry.routes.add(name, aliasPath, "mapActorAlias");
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
    // The inbox collection (setInboxDispatcher()) may have added the route.
    if (!checkSharedInboxRoute(this.registry, inboxPath, "setInboxListeners")) {
      this.registry.routes.add("inbox", inboxPath, "setInboxListeners");
    }
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
      onUnverifiedActivity(handler) {
        assertCallback(handler, "onUnverifiedActivity");
        if (registry.unverifiedActivityHandler != null) {
          throw new DuplicateRegistrationError(
            "unverified activity handler",
            "onUnverifiedActivity",
          );
        }
        registry.unverifiedActivityHandler = handler;
        return setters;
      },
      withIdempotency(strategy) {
        if (
          typeof strategy !== "function" && strategy !== "per-inbox" &&
          strategy !== "per-origin" && strategy !== "global"
        ) {
          throw new TypeError(
            'withIdempotency() takes "per-inbox", "per-origin", "global" or a callback; got ' +
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

  setOutboxListeners(outboxPath: string): OutboxListenerSetters<TContextData> {
    validateRoutePath(outboxPath, true, "setOutboxListeners");
    return registerOutboxListeners(this.registry, outboxPath);
  }

  setOutboxDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Activity, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>> {
    return this.#collection("outbox", "setOutboxDispatcher", path, dispatcher);
  }

  setFollowersDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<FollowerItem, TContextData>,
  ): CollectionCallbackSetters<TContextData> {
    return this.#collection("followers", "setFollowersDispatcher", path, dispatcher);
  }

  setFollowingDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Actor | URL, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>> {
    return this.#collection("following", "setFollowingDispatcher", path, dispatcher);
  }

  setInboxDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Activity, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>> {
    return this.#collection("inboxCollection", "setInboxDispatcher", path, dispatcher);
  }

  setLikedDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<APObject | URL, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>> {
    return this.#collection("liked", "setLikedDispatcher", path, dispatcher);
  }

  setFeaturedDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<APObject, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>> {
    return this.#collection("featured", "setFeaturedDispatcher", path, dispatcher);
  }

  setFeaturedTagsDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Hashtag, TContextData, RequestContext<TContextData>>,
  ): CollectionCallbackSetters<TContextData, RequestContext<TContextData>> {
    return this.#collection("featuredTags", "setFeaturedTagsDispatcher", path, dispatcher);
  }

  #collection<TItem, TContext extends Context<TContextData>>(
    name: ActorCollectionName,
    method: string,
    path: string,
    dispatcher: CollectionDispatcher<TItem, TContextData, TContext>,
  ): CollectionCallbackSetters<TContextData, TContext> {
    return registerActorCollection(
      this.registry,
      name,
      method,
      path,
      dispatcher,
      validateRoutePath,
    );
  }

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
  ): CustomCollectionCallbackSetters<TParam, RequestContext<TContextData>, TContextData> {
    return registerCustomCollection(this.registry, false, name, itemType, path, dispatcher);
  }

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
  ): CustomCollectionCallbackSetters<TParam, RequestContext<TContextData>, TContextData> {
    return registerCustomCollection(this.registry, true, name, itemType, path, dispatcher);
  }

  defineTask<
    TSchema extends StandardSchemaV1,
    TResult extends TaskResultValue | void = void,
  >(
    name: string,
    options: TaskDefinitionOptions<TContextData, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  defineTask<
    TSchema extends StandardSchemaV1,
    TResult extends TaskResultValue | void = void,
  >(
    name: string,
    options: TaskDefinitionManyOptions<TContextData, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  defineTask<
    TSchema extends StandardSchemaV1,
    TResult extends TaskResultValue | void = void,
  >(
    name: string,
    options:
      | TaskDefinitionOptions<TContextData, TSchema, TResult>
      | TaskDefinitionManyOptions<TContextData, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  > {
    // The union matches neither overload: the store checks the options.
    return this.registry.tasks.defineTask(
      name,
      options as TaskDefinitionOptions<TContextData, TSchema, TResult>,
    );
  }
}

function assertCallback(callback: unknown, method: string): void {
  if (typeof callback !== "function") {
    throw new TypeError(`The callback given to ${method}() must be a function.`);
  }
}
