import type { Activity, Actor } from "@fedify/vocab";
import type {
  ActorDispatcher,
  CollectionDispatcher,
  FollowerItem,
  InboxErrorHandler,
  InboxListener,
} from "./callbacks.ts";
import { DuplicateRegistrationError, RoutePathError } from "./errors.ts";
import type { ActivityClass, FederationRegistry } from "./registry.ts";
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
   * Registers the actor dispatcher and the actor route.
   * @param path The path template, with one `{identifier}` placeholder,
   *             e.g. `"/users/{identifier}"`.
   * @param dispatcher Returns the actor for an identifier.
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   * @example
   * ```ts
   * federation.setActorDispatcher("/users/{identifier}", (ctx, identifier) =>
   *   new Person({ id: ctx.getActorUri(identifier), preferredUsername: identifier }));
   * ```
   */
  setActorDispatcher(path: string, dispatcher: ActorDispatcher<TContextData>): void;

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
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setOutboxDispatcher(path: string, dispatcher: CollectionDispatcher<Activity, TContextData>): void;

  /**
   * Registers the followers collection dispatcher and route.  Also what
   * `sendActivity(sender, "followers", …)` enumerates.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of followers (anything with an inbox).
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setFollowersDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<FollowerItem, TContextData>,
  ): void;

  /**
   * Registers the following collection dispatcher and route.
   * @param path The path template, with one `{identifier}` placeholder.
   * @param dispatcher Returns a page of followed actors or their URIs.
   * @throws {RoutePathError} When the path is malformed.
   * @throws {DuplicateRegistrationError} When already registered.
   */
  setFollowingDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Actor | URL, TContextData>,
  ): void;
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

  setActorDispatcher(path: string, dispatcher: ActorDispatcher<TContextData>): void {
    validateRoutePath(path, true, "setActorDispatcher");
    assertCallback(dispatcher, "setActorDispatcher");
    if (this.registry.actor != null) {
      throw new DuplicateRegistrationError("actor dispatcher", "setActorDispatcher");
    }
    this.registry.actor = { path, dispatcher };
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
    };
    return setters;
  }

  setOutboxDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Activity, TContextData>,
  ): void {
    validateRoutePath(path, true, "setOutboxDispatcher");
    assertCallback(dispatcher, "setOutboxDispatcher");
    if (this.registry.outbox != null) {
      throw new DuplicateRegistrationError("outbox dispatcher", "setOutboxDispatcher");
    }
    this.registry.outbox = { path, dispatcher };
  }

  setFollowersDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<FollowerItem, TContextData>,
  ): void {
    validateRoutePath(path, true, "setFollowersDispatcher");
    assertCallback(dispatcher, "setFollowersDispatcher");
    if (this.registry.followers != null) {
      throw new DuplicateRegistrationError("followers dispatcher", "setFollowersDispatcher");
    }
    this.registry.followers = { path, dispatcher };
  }

  setFollowingDispatcher(
    path: string,
    dispatcher: CollectionDispatcher<Actor | URL, TContextData>,
  ): void {
    validateRoutePath(path, true, "setFollowingDispatcher");
    assertCallback(dispatcher, "setFollowingDispatcher");
    if (this.registry.following != null) {
      throw new DuplicateRegistrationError("following dispatcher", "setFollowingDispatcher");
    }
    this.registry.following = { path, dispatcher };
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
