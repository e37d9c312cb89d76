import {
  type Activity,
  type Actor,
  type Link,
  type Object as APObject,
  OrderedCollection,
  OrderedCollectionPage,
  type Recipient,
} from "@fedify/vocab";
import type { CollectionRegistration } from "./registry-api.ts";
import type { RequestContext } from "./context-api.ts";

/**
 * Any of the collections' item types.
 * @since 0.2.0
 */
export type CollectionItem = Activity | Actor | Recipient | URL;

function toItem(item: CollectionItem): APObject | Link | URL | null {
  if (item instanceof URL) return item;
  // Followers are anything with an inbox, not necessarily vocabulary
  // objects: list them by id, as Fedify and Mastodon do.
  if (typeof (item as APObject).toJsonLd === "function") return item as APObject;
  return item.id ?? null;
}

function pageUrl(collection: URL, cursor: string): URL {
  const url = new URL(collection);
  url.searchParams.set("cursor", cursor);
  return url;
}

/**
 * Builds the collection (or, with a `cursor` query parameter, the page) a
 * collection route serves:
 * - without a cursor, for a collection with a first cursor: an
 *   `OrderedCollection` with `totalItems` (from the counter), `first` and
 *   `last` (from the cursors) and no items;
 * - without a cursor otherwise: the whole collection, from the dispatcher
 *   called with cursor `null`;
 * - with a cursor: an `OrderedCollectionPage` with its items, `partOf`,
 *   `next` and `prev`.
 * @param ctx The request's context.
 * @param registration The collection's registration.
 * @param identifier The actor's identifier.
 * @param collectionUri The collection's URI.
 * @returns The collection or page, or `null` when the dispatcher has none.
 * @since 0.2.0
 */
export async function buildCollection<TContextData>(
  ctx: RequestContext<TContextData>,
  registration: CollectionRegistration<CollectionItem, TContextData>,
  identifier: string,
  collectionUri: URL,
): Promise<OrderedCollection | OrderedCollectionPage | null> {
  const cursor = ctx.url.searchParams.get("cursor");
  const count = async () => {
    const total = await registration.counter?.(ctx, identifier);
    return total == null ? null : Number(total);
  };
  if (cursor == null) {
    const first = await registration.firstCursor?.(ctx, identifier) ?? null;
    if (first != null) {
      const last = await registration.lastCursor?.(ctx, identifier) ?? null;
      return new OrderedCollection({
        id: collectionUri,
        totalItems: await count(),
        first: pageUrl(collectionUri, first),
        last: last == null ? null : pageUrl(collectionUri, last),
      });
    }
    const page = await registration.dispatcher(ctx, identifier, null);
    if (page == null) return null;
    const items = page.items.map(toItem).filter((item) => item != null);
    return new OrderedCollection({
      id: collectionUri,
      totalItems: await count() ?? items.length,
      items,
    });
  }
  const page = await registration.dispatcher(ctx, identifier, cursor);
  if (page == null) return null;
  return new OrderedCollectionPage({
    id: pageUrl(collectionUri, cursor),
    partOf: collectionUri,
    items: page.items.map(toItem).filter((item) => item != null),
    next: page.nextCursor == null ? null : pageUrl(collectionUri, page.nextCursor),
    prev: page.prevCursor == null ? null : pageUrl(collectionUri, page.prevCursor),
  });
}
