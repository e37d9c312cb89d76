// Registering collections: the actor's (outbox, inbox, followers,
// following, liked, featured, featured tags) and custom ones.  What the
// federation's collection methods do, generic over the callbacks' types:
// the registry is the federation's, read through the fields it shares.
import type { Object as APObject } from "@fedify/vocab";
import { DuplicateRegistrationError, RoutePathError } from "../http/errors.ts";
import type { RouteTable } from "../http/route-table.ts";
import { parseUriTemplate } from "../http/uri-template.ts";
import type { ActorCollectionName } from "./routes.ts";

export type { ActorCollectionName };

/** A registered callback, whatever its context and arguments. */
// deno-lint-ignore no-explicit-any
type Callback = (...args: any[]) => unknown;

/**
 * The setters a collection registration returns: each replaces one
 * callback and returns the setters, for chaining.  The federation's
 * `CollectionCallbackSetters` and `CustomCollectionCallbackSetters` are
 * these with their callbacks' types.
 * @since 0.4.0
 */
export interface CollectionSetters {
  setCounter(counter: Callback): CollectionSetters;
  setFirstCursor(cursor: Callback): CollectionSetters;
  setLastCursor(cursor: Callback): CollectionSetters;
  authorize(predicate: Callback): CollectionSetters;
}

/**
 * A custom collection as registered.
 * @since 0.4.0
 */
export interface CustomCollectionRecord {
  readonly name: string | symbol;
  // deno-lint-ignore no-explicit-any
  readonly itemType: (new (...args: any[]) => APObject) & { readonly typeId: URL };
  readonly ordered: boolean;
  readonly routeName: string;
  readonly path: string;
  readonly dispatcher: Callback;
  readonly counter?: Callback | undefined;
  readonly firstCursor?: Callback | undefined;
  readonly lastCursor?: Callback | undefined;
  readonly authorize?: Callback | undefined;
}

/**
 * The registry fields collection registration reads and writes.
 * @since 0.4.0
 */
export type CollectionRegistrations =
  & {
    readonly routes: Pick<RouteTable, "add">;
    readonly inboxPath?: string | undefined;
    /** The outbox listeners' path, which shares the outbox's route (0.4.0). */
    readonly outboxListenerPath?: string | undefined;
    readonly collections: Map<string | symbol, CustomCollectionRecord>;
  }
  & { readonly [name in ActorCollectionName]?: { readonly path: string } | undefined };

/** The route of each actor collection; the inbox collection shares the inbox's. */
const ROUTE_NAMES: Record<ActorCollectionName, string> = {
  outbox: "outbox",
  inboxCollection: "inbox",
  followers: "followers",
  following: "following",
  liked: "liked",
  featured: "featured",
  featuredTags: "featuredTags",
};

/**
 * The setters of one registration.  Each checks its callback and hands
 * `apply` the one field it sets; `apply` replaces the registration rather
 * than changing it in place, so that a builder's copy made in between
 * keeps what it had.
 */
function collectionSetters(
  apply: (
    change: Partial<Record<"counter" | "firstCursor" | "lastCursor" | "authorize", Callback>>,
  ) => void,
): CollectionSetters {
  const update = (method: string, change: Parameters<typeof apply>[0]) => {
    assertCallback(Object.values(change)[0], method);
    apply(change);
    return setters;
  };
  const setters: CollectionSetters = {
    setCounter: (counter) => update("setCounter", { counter }),
    setFirstCursor: (firstCursor) => update("setFirstCursor", { firstCursor }),
    setLastCursor: (lastCursor) => update("setLastCursor", { lastCursor }),
    authorize: (authorize) => update("authorize", { authorize }),
  };
  return setters;
}

function assertCallback(callback: unknown, method: string): void {
  if (typeof callback !== "function") {
    throw new TypeError(`The callback given to ${method}() must be a function.`);
  }
}

/**
 * Checks that the outbox collection has the outbox listeners' path, when
 * they are registered first.
 * @returns Whether the outbox route is already in the route table.
 * @throws {RoutePathError} When it has another path.
 */
function checkSharedOutboxRoute(
  registry: Pick<CollectionRegistrations, "outboxListenerPath">,
  path: string,
): boolean {
  const existing = registry.outboxListenerPath;
  if (existing == null) return false;
  if (existing !== path) {
    throw new RoutePathError(
      path,
      `The path given to setOutboxDispatcher() must be the outbox listeners', ` +
        `${JSON.stringify(existing)}.`,
    );
  }
  return true;
}

/**
 * Checks that the inbox collection and the inbox listeners, which share a
 * route, have one path.
 * @param registry The registry.
 * @param path The path being registered.
 * @param method The registration method.
 * @returns Whether the inbox route is already in the route table.
 * @throws {RoutePathError} When the other one has another path.
 * @since 0.3.0
 */
export function checkSharedInboxRoute(
  registry: Pick<CollectionRegistrations, "inboxPath" | "inboxCollection">,
  path: string,
  method: "setInboxListeners" | "setInboxDispatcher",
): boolean {
  const existing = method === "setInboxListeners"
    ? registry.inboxCollection?.path
    : registry.inboxPath;
  if (existing == null) return false;
  if (existing !== path) {
    throw new RoutePathError(
      path,
      `The path ${JSON.stringify(path)} given to ${method}() must be the inbox path ` +
        `${JSON.stringify(existing)}: the inbox collection is served on GET where the inbox ` +
        "listeners take POSTs.",
    );
  }
  return true;
}

/**
 * Registers one of the actor's collections.
 * @param registry The registry.
 * @param name The collection's registry field.
 * @param method The registration method, for error messages.
 * @param path The path template, with one `{identifier}`.
 * @param dispatcher The dispatcher.
 * @param validatePath Checks the path (`validateRoutePath()`).
 * @returns The setters.
 * @throws {RoutePathError} When the path is malformed.
 * @throws {DuplicateRegistrationError} When already registered.
 * @since 0.3.0
 */
export function registerActorCollection(
  registry: CollectionRegistrations,
  name: ActorCollectionName,
  method: string,
  path: string,
  dispatcher: Callback,
  validatePath: (path: string, placeholder: boolean, method: string) => void,
): CollectionSetters {
  validatePath(path, true, method);
  assertCallback(dispatcher, method);
  if (registry[name] != null) {
    throw new DuplicateRegistrationError(
      `${name === "inboxCollection" ? "inbox" : name} dispatcher`,
      method,
    );
  }
  const routed = (name === "inboxCollection" &&
    checkSharedInboxRoute(registry, path, "setInboxDispatcher")) ||
    (name === "outbox" && checkSharedOutboxRoute(registry, path));
  if (!routed) registry.routes.add(ROUTE_NAMES[name], path, method);
  const fields = registry as unknown as Record<string, Record<string, unknown>>;
  fields[name] = { path, dispatcher };
  return collectionSetters((change) => {
    fields[name] = { ...fields[name], ...change };
  });
}

/**
 * Registers a custom collection.
 * @param registry The registry.
 * @param ordered Whether it is served as an `OrderedCollection`.
 * @param name Its name.
 * @param itemType Its item class.
 * @param path Its path template, with at least one variable.
 * @param dispatcher Its dispatcher.
 * @returns The setters.
 * @throws {TypeError} When the name, class or dispatcher is malformed.
 * @throws {RoutePathError} When the path is malformed or has no variable.
 * @throws {RouteConflictError} When the path could match another route's.
 * @throws {DuplicateRegistrationError} When the name is taken.
 * @since 0.3.0
 */
export function registerCustomCollection(
  registry: CollectionRegistrations,
  ordered: boolean,
  name: string | symbol,
  itemType: CustomCollectionRecord["itemType"],
  path: string,
  dispatcher: Callback,
): CollectionSetters {
  const method = ordered ? "setOrderedCollectionDispatcher" : "setCollectionDispatcher";
  if (typeof name !== "string" && typeof name !== "symbol") {
    throw new TypeError(`The name given to ${method}() must be a string or a symbol.`);
  }
  if (typeof itemType !== "function" || !(itemType.typeId instanceof URL)) {
    throw new TypeError(
      `The item type given to ${method}() must be a vocabulary class, e.g. Note.`,
    );
  }
  assertCallback(dispatcher, method);
  let variables: readonly string[];
  try {
    variables = parseUriTemplate(path).variables;
  } catch (error) {
    throw new RoutePathError(String(path), `${(error as Error).message} (given to ${method}())`);
  }
  if (variables.length === 0) {
    throw new RoutePathError(
      path,
      `The path ${JSON.stringify(path)} given to ${method}() must have a variable, ` +
        'e.g. "/users/{identifier}/tags/{tag}".',
    );
  }
  const { collections } = registry;
  if (collections.has(name)) {
    throw new DuplicateRegistrationError(`collection dispatcher ${describeName(name)}`, method);
  }
  // Names may be symbols: the route table keys routes by string.
  const routeName = `collection:${collections.size}`;
  registry.routes.add(routeName, path, method);
  collections.set(name, {
    name,
    itemType,
    ordered,
    routeName,
    path,
    dispatcher,
  });
  return collectionSetters((change) => {
    collections.set(name, { ...collections.get(name)!, ...change });
  });
}

/**
 * A collection's name as error messages show it: `"tagged"` or
 * `Symbol(bookmarks)`.
 * @param name The name.
 * @returns The text.
 * @since 0.3.0
 */
export function describeName(name: string | symbol): string {
  return typeof name === "string" ? JSON.stringify(name) : name.toString();
}
