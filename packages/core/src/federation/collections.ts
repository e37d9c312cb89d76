// The federation's collection routes: from a matched route to the
// registration, and from the registration to what
// activitypub/collections/ builds.
import {
  buildCollectionDocument,
  type CollectionDocument,
  type CollectionSource,
} from "../activitypub/collections/build.ts";
import type { ParseUriResult, RequestContext } from "./context-api.ts";
import type {
  CollectionRegistration,
  CustomCollectionRegistration,
  FederationRegistry,
} from "./registry-api.ts";

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

function customCollectionOf<TContextData>(
  registry: FederationRegistry<TContextData>,
  routeName: string,
): CustomCollectionRegistration<TContextData> | undefined {
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
export function isCollectionRoute<TContextData>(
  registry: FederationRegistry<TContextData>,
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
 * @param routeName The matched route's name (see {@link isCollectionRoute}).
 * @param values The matched route's values.
 * @returns The document, or `notFound` / `unauthorized`.
 * @since 0.3.0
 */
export async function serveCollectionRoute<TContextData>(
  ctx: RequestContext<TContextData>,
  registry: FederationRegistry<TContextData>,
  routeName: string,
  values: Readonly<Record<string, string>>,
): Promise<CollectionRouteResult> {
  const id = new URL(registry.routes.build(routeName, values), ctx.canonicalOrigin);
  const cursor = ctx.url.searchParams.get("cursor");
  let source: CollectionSource<unknown>;
  if (Object.hasOwn(ACTOR_COLLECTION_ROUTES, routeName)) {
    const field = ACTOR_COLLECTION_ROUTES[routeName as keyof typeof ACTOR_COLLECTION_ROUTES];
    const registration = registry[field] as
      | CollectionRegistration<unknown, TContextData, RequestContext<TContextData>>
      | undefined;
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

/**
 * What `ctx.parseUri()` says of a custom collection's route.
 * @param registry The registry.
 * @param routeName The matched route's name.
 * @param values The matched route's values.
 * @returns The result, or `null` when the route is not a custom
 *          collection's.
 * @since 0.3.0
 */
export function parseCollectionUri<TContextData>(
  registry: FederationRegistry<TContextData>,
  routeName: string,
  values: Readonly<Record<string, string>>,
): ParseUriResult | null {
  const registration = customCollectionOf(registry, routeName);
  if (registration == null) return null;
  return {
    type: registration.ordered ? "orderedCollection" : "collection",
    name: registration.name,
    class: registration.itemType,
    typeId: registration.itemType.typeId,
    values,
  };
}
