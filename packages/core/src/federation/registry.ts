import { RouteTable } from "../activitypub/http/route-table.ts";
import { TaskStore } from "../tasks/registry.ts";
import type { FederationRegistry } from "./registry-api.ts";

/**
 * Creates an empty registry.
 * @returns The registry.
 * @since 0.1.0
 */
export function createRegistry<TContextData>(): FederationRegistry<TContextData> {
  return {
    routes: new RouteTable(),
    inboxListeners: new Map(),
    outboxListeners: new Map(),
    objects: new Map(),
    collections: new Map(),
    tasks: new TaskStore(),
  };
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
