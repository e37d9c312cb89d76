import {
  Collection,
  CollectionPage,
  type Link,
  type Object as APObject,
  OrderedCollection,
  OrderedCollectionPage,
} from "@fedify/vocab";

/**
 * One page of a collection, as a collection dispatcher returns it.
 * @typeParam TItem The type of the collection's items.
 * @since 0.1.0
 */
export interface PageItems<TItem> {
  /** The items on this page. */
  readonly items: readonly TItem[];
  /** The cursor of the next page, or `null`/absent on the last page. */
  readonly nextCursor?: string | null;
  /** The cursor of the previous page, or `null`/absent on the first page. */
  readonly prevCursor?: string | null;
}

/**
 * Where a served collection's contents come from: the application's
 * dispatcher, counter and cursors, already bound to the request and to the
 * values of the route's variables.  Internal.
 * @typeParam TItem The type of the collection's items.
 * @since 0.3.0
 */
export interface CollectionSource<TItem> {
  /** The collection's URI (without `cursor`). */
  readonly id: URL;
  /** Whether to serve `OrderedCollection`s (else `Collection`s). */
  readonly ordered: boolean;
  /** Returns the whole collection (`null` cursor) or a page, or `null`. */
  dispatch(cursor: string | null): PageItems<TItem> | null | Promise<PageItems<TItem> | null>;
  /** Returns `totalItems`, or `null` when unknown. */
  count?(): number | bigint | null | Promise<number | bigint | null>;
  /** Returns the first page's cursor, or `null` when not paged. */
  firstCursor?(): string | null | Promise<string | null>;
  /** Returns the last page's cursor, or `null`. */
  lastCursor?(): string | null | Promise<string | null>;
}

/**
 * What {@link buildCollectionDocument} returns.
 * @since 0.3.0
 */
export type CollectionDocument = Collection | CollectionPage;

type CollectionItem = APObject | Link | URL;

function toItem(item: unknown): CollectionItem | null {
  if (item instanceof URL) return item;
  if (typeof item !== "object" || item == null) return null;
  if (typeof (item as APObject).toJsonLd === "function") return item as APObject;
  // Followers are anything with an inbox, not necessarily vocabulary
  // objects: list them by id, as Fedify and Mastodon do.
  const id = (item as { id?: unknown }).id;
  return id instanceof URL ? id : null;
}

function pageUrl(collection: URL, cursor: string): URL {
  const url = new URL(collection);
  url.searchParams.set("cursor", cursor);
  return url;
}

async function total(
  source: CollectionSource<unknown>,
): Promise<number | null> {
  const count = await source.count?.();
  return count == null ? null : Number(count);
}

/**
 * Builds what a collection route serves, as Fedify does:
 * - without a cursor, for a collection with a first cursor: the
 *   collection with `totalItems` (from the counter), `first` and `last`
 *   (`?cursor=…` URLs) and no items;
 * - without a cursor otherwise: the whole collection, from the dispatcher
 *   called with cursor `null` (`totalItems` from the counter, else the
 *   number of items);
 * - with a cursor: that page, with `partOf`, `next` and `prev`.
 *
 * Items that are URLs are listed as links; objects without `toJsonLd()`
 * (e.g. a follower given as `{ id, inboxId }`) by their `id`.
 * @param source The collection's callbacks, bound to the request.
 * @param cursor The request's `cursor` query parameter, or `null`.
 * @returns The collection or page (`OrderedCollection`/
 *          `OrderedCollectionPage` when `source.ordered`), or `null` when
 *          the dispatcher returns `null`.
 * @since 0.3.0
 */
export async function buildCollectionDocument(
  source: CollectionSource<unknown>,
  cursor: string | null,
): Promise<CollectionDocument | null> {
  const Whole = source.ordered ? OrderedCollection : Collection;
  const Page = source.ordered ? OrderedCollectionPage : CollectionPage;
  const { id } = source;
  if (cursor == null) {
    const first = await source.firstCursor?.() ?? null;
    if (first != null) {
      const last = await source.lastCursor?.() ?? null;
      return new Whole({
        id,
        totalItems: await total(source),
        first: pageUrl(id, first),
        last: last == null ? null : pageUrl(id, last),
      });
    }
    const whole = await source.dispatch(null);
    if (whole == null) return null;
    const items = whole.items.map(toItem).filter((item) => item != null);
    return new Whole({ id, totalItems: await total(source) ?? items.length, items });
  }
  const page = await source.dispatch(cursor);
  if (page == null) return null;
  return new Page({
    id: pageUrl(id, cursor),
    partOf: id,
    items: page.items.map(toItem).filter((item) => item != null),
    next: page.nextCursor == null ? null : pageUrl(id, page.nextCursor),
    prev: page.prevCursor == null ? null : pageUrl(id, page.prevCursor),
  });
}
