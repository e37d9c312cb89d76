import type { Activity } from "@fedify/vocab";
import type {
  ActorDispatcher,
  CollectionDispatcher,
  FollowerItem,
  InboxErrorHandler,
  InboxListener,
} from "./callbacks.ts";
import type { Actor } from "@fedify/vocab";
import { TaskStore } from "../tasks/registry.ts";
import type { TaskContext } from "./task-context.ts";

/**
 * A registered route: its path template and the callback serving it.
 * @since 0.1.0
 */
export interface RouteRegistration<TCallback> {
  /** The path template, with one `{identifier}` placeholder. */
  readonly path: string;
  /** The callback serving the route. */
  readonly dispatcher: TCallback;
}

/**
 * An activity class, as accepted by `InboxListenerSetters.on()`.
 * @since 0.1.0
 */
export type ActivityClass<TActivity extends Activity = Activity> = new (
  // deno-lint-ignore no-explicit-any
  ...args: any[]
) => TActivity;

/**
 * Everything registered on a federation or builder.  Internal: the builder
 * copies it on `build()` with {@link cloneRegistry}, so every field must be
 * immutable, a `Map`/`Set` (copied one level deep) or an object with a
 * `clone()` method.  To add a registration kind (e.g. tasks), add a field
 * here and initialize it in {@link createRegistry}.
 * @since 0.1.0
 */
export interface FederationRegistry<TContextData> {
  actor?: RouteRegistration<ActorDispatcher<TContextData>>;
  inboxPath?: string;
  sharedInboxPath?: string;
  readonly inboxListeners: Map<ActivityClass, InboxListener<TContextData, Activity>>;
  inboxErrorHandler?: InboxErrorHandler<TContextData>;
  outbox?: RouteRegistration<CollectionDispatcher<Activity, TContextData>>;
  followers?: RouteRegistration<CollectionDispatcher<FollowerItem, TContextData>>;
  following?: RouteRegistration<CollectionDispatcher<Actor | URL, TContextData>>;
  /** The typed background tasks, by name. */
  readonly tasks: TaskStore<TContextData, TaskContext<TContextData>>;
}

/**
 * Creates an empty registry.
 * @returns The registry.
 * @since 0.1.0
 */
export function createRegistry<TContextData>(): FederationRegistry<TContextData> {
  return { inboxListeners: new Map(), tasks: new TaskStore() };
}

/**
 * Copies a registry so that later registrations on either copy do not
 * reach the other.  `Map` and `Set` fields are copied, objects with a
 * `clone()` method (e.g. a task store) are cloned, and everything else
 * (callbacks, paths) is shared, being immutable.
 * @param registry The registry to copy.
 * @returns The copy.
 * @since 0.1.0
 */
export function cloneRegistry<TContextData>(
  registry: FederationRegistry<TContextData>,
): FederationRegistry<TContextData> {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(registry)) {
    copy[key] = value instanceof Map
      ? new Map(value)
      : value instanceof Set
      ? new Set(value)
      : isCloneable(value)
      ? value.clone()
      : value;
  }
  return copy as unknown as FederationRegistry<TContextData>;
}

function isCloneable(value: unknown): value is { clone(): unknown } {
  return typeof value === "object" && value != null &&
    typeof (value as { clone?: unknown }).clone === "function";
}
