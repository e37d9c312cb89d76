// The collection routes: from a matched route to the registered callbacks,
// and from the callbacks to what build.ts makes of them.  Generic over the
// request's context: the federation's registry fills in the callbacks.
import type { RouteTable } from "../http/route-table.ts";
import {
  buildCollectionDocument,
  type CollectionDocument,
  type CollectionSource,
  type PageItems,
} from "./build.ts";

/**
 * The callbacks of a collection route, as the application registered them:
 * keyed by the actor's identifier for an actor's collections, by the path's
 * values for a custom collection.
 * @typeParam TContext The request's context.
 * @typeParam TKey The identifier, or the path's values.
 * @since 0.4.0
 */
export interface CollectionCallbacks<TContext, TKey> {
  /** Returns the whole collection (cursor `null`) or one page. */
  readonly dispatcher: (
    ctx: TContext,
    key: TKey,
    cursor: string | null,
  ) => PageItems<unknown> | null | Promise<PageItems<unknown> | null>;
  /** Returns the number of items, or `null`. */
  readonly counter?:
    | ((ctx: TContext, key: TKey) => number | bigint | null | Promise<number | bigint | null>)
    | undefined;
  /** Returns the first page's cursor, or `null` for an unpaged collection. */
  readonly firstCursor?:
    | ((ctx: TContext, key: TKey) => string | null | Promise<string | null>)
    | undefined;
  /** Returns the last page's cursor, or `null`. */
  readonly lastCursor?:
    | ((ctx: TContext, key: TKey) => string | null | Promise<string | null>)
    | undefined;
  /** Tells whether the request may see the collection; `false` answers 401. */
  readonly authorize?: ((ctx: TContext, key: TKey) => boolean | Promise<boolean>) | undefined;
}

/**
 * A custom collection's registration, as the routes read it.
 * @typeParam TContext The request's context.
 * @since 0.4.0
 */
export interface CustomCollectionRoute<TContext>
  extends CollectionCallbacks<TContext, Record<string, string>> {
  /** The route's name in the route table: `collection:<n>`. */
  readonly routeName: string;
  /** Whether it is served as an `OrderedCollection`. */
  readonly ordered: boolean;
}

/**
 * The registry fields of the actor's collections.
 * @since 0.3.0
 */
export type ActorCollectionName =
  | "outbox"
  | "inboxCollection"
  | "followers"
  | "following"
  | "liked"
  | "featured"
  | "featuredTags";

/**
 * The collections a federation registered, as the routes read them: the
 * part of its registry they use.
 * @typeParam TContext The request's context.
 * @since 0.4.0
 */
export type CollectionRegistry<TContext> =
  & {
    /** Every route's path template. */
    readonly routes: Pick<RouteTable, "build">;
    /** Custom collections, by name. */
    readonly collections: ReadonlyMap<string | symbol, CustomCollectionRoute<TContext>>;
  }
  & {
    readonly [name in ActorCollectionName]?: CollectionCallbacks<TContext, string> | undefined;
  };

/**
 * The route names of the actor's collections, with their registry fields.
 * The inbox collection shares the `inbox` route with the inbox listeners.
 */
const ACTOR_COLLECTION_ROUTES = {
  outbox: "outbox",
  inbox: "inboxCollection",
  followers: "followers",
  following: "following",
  liked: "liked",
  featured: "featured",
  featuredTags: "featuredTags",
} as const;

/**
 * What a collection route answers: the document, or why there is none.
 * @since 0.3.0
 */
export type CollectionRouteResult =
  | { readonly status: "served"; readonly document: CollectionDocument }
  | { readonly status: "notFound" | "unauthorized" };

/**
 * The custom collection registered under a route name.
 * @param registry The registry.
 * @param routeName The route's name.
 * @returns The registration, or `undefined`.
 * @since 0.4.0
 */
export function customCollectionOf<TRegistration extends { readonly routeName: string }>(
  registry: { readonly collections: ReadonlyMap<string | symbol, TRegistration> },
  routeName: string,
): TRegistration | undefined {
  if (!routeName.startsWith("collection:")) return undefined;
  for (const registration of registry.collections.values()) {
    if (registration.routeName === routeName) return registration;
  }
  return undefined;
}

/**
 * Tells whether a matched route is a collection (an actor's or a custom
 * one) that the federation serves on GET.
 * @param registry The registry.
 * @param routeName The matched route's name.
 * @returns Whether {@link serveCollectionRoute} answers it.
 * @since 0.3.0
 */
export function isCollectionRoute<TContext>(
  registry: CollectionRegistry<TContext>,
  routeName: string,
): boolean {
  if (Object.hasOwn(ACTOR_COLLECTION_ROUTES, routeName)) {
    const field = ACTOR_COLLECTION_ROUTES[routeName as keyof typeof ACTOR_COLLECTION_ROUTES];
    return registry[field] != null;
  }
  return customCollectionOf(registry, routeName) != null;
}

/**
 * Builds what a collection route serves: checks `authorize()` first, then
 * calls the dispatcher (and the counter and cursors) through
 * `buildCollectionDocument()`.
 * @param ctx The request's context.
 * @param registry The registry.
 * @param routeName The matched route's name (see {@link isCollectionRoute}).
 * @param values The matched route's values.
 * @returns The document, or `notFound` / `unauthorized`.
 * @since 0.3.0
 */
export async function serveCollectionRoute<
  TContext extends { readonly canonicalOrigin: string; readonly url: URL },
>(
  ctx: TContext,
  registry: CollectionRegistry<TContext>,
  routeName: string,
  values: Readonly<Record<string, string>>,
): Promise<CollectionRouteResult> {
  const id = new URL(registry.routes.build(routeName, values), ctx.canonicalOrigin);
  const cursor = ctx.url.searchParams.get("cursor");
  let source: CollectionSource<unknown>;
  if (Object.hasOwn(ACTOR_COLLECTION_ROUTES, routeName)) {
    const field = ACTOR_COLLECTION_ROUTES[routeName as keyof typeof ACTOR_COLLECTION_ROUTES];
    const registration = registry[field];
    if (registration == null) return { status: "notFound" };
    const { identifier } = values;
    if (registration.authorize != null && !await registration.authorize(ctx, identifier)) {
      return { status: "unauthorized" };
    }
    source = {
      id,
      ordered: true,
      dispatch: (cursor) => registration.dispatcher(ctx, identifier, cursor),
      count: () => registration.counter?.(ctx, identifier) ?? null,
      firstCursor: () => registration.firstCursor?.(ctx, identifier) ?? null,
      lastCursor: () => registration.lastCursor?.(ctx, identifier) ?? null,
    };
  } else {
    const registration = customCollectionOf(registry, routeName);
    if (registration == null) return { status: "notFound" };
    if (registration.authorize != null && !await registration.authorize(ctx, values)) {
      return { status: "unauthorized" };
    }
    // The callbacks may keep the values: give them their own copy.
    const own = () => ({ ...values });
    source = {
      id,
      ordered: registration.ordered,
      dispatch: (cursor) => registration.dispatcher(ctx, own(), cursor),
      count: () => registration.counter?.(ctx, own()) ?? null,
      firstCursor: () => registration.firstCursor?.(ctx, own()) ?? null,
      lastCursor: () => registration.lastCursor?.(ctx, own()) ?? null,
    };
  }
  const document = await buildCollectionDocument(source, cursor);
  return document == null ? { status: "notFound" } : { status: "served", document };
}
