import { getLogger } from "@logtape/logtape";
import type {
  Collection,
  CollectionPage,
  DocumentLoader,
  Link,
  Object as APObject,
} from "@fedify/vocab";
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveIntegerOption } from "../../options/value-options.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import { withDocumentLoadBudget } from "../network/document-budget.ts";
import { createFetchDocumentLoader } from "../network/document-loader.ts";
import { RemoteRequestError } from "../network/errors.ts";

const logger = getLogger(["fedwork", "activitypub", "collections"]);

/**
 * How many pages {@link traverseCollection} fetches at most, by default:
 * 100.
 * @since 0.3.0
 */
export const DEFAULT_TRAVERSE_MAX_PAGES = 100;

/**
 * How many items {@link traverseCollection} yields at most, by default:
 * 10,000.
 * @since 0.3.0
 */
export const DEFAULT_TRAVERSE_MAX_ITEMS = 10_000;

/**
 * The `User-Agent` of the document loader {@link traverseCollection} makes
 * when given none.
 */
const FALLBACK_USER_AGENT = "Fedwork (traverseCollection)";

/**
 * Options for {@link traverseCollection}: Fedify's, plus the two bounds a
 * collection served by a stranger needs.
 * @since 0.3.0
 */
export interface TraverseCollectionOptions {
  /**
   * Loads the pages (and the items listed by URL).  Every page is one load,
   * so the loader's time, size and address limits apply to each.
   * @default a loader from `createFetchDocumentLoader()` with its default
   *          limits, refusing private addresses
   */
  readonly documentLoader?: DocumentLoader;
  /**
   * Loads the JSON-LD contexts the pages name; each page may load at most
   * 8 remote ones.
   * @default the `documentLoader`
   */
  readonly contextLoader?: DocumentLoader;
  /**
   * Ends the traversal (with a warning in the log) instead of throwing
   * when a page cannot be fetched or a bound is reached, and skips an item
   * that cannot be fetched.
   * @default false
   */
  readonly suppressError?: boolean;
  /**
   * How long to wait between two page fetches; zero or negative waits not
   * at all.
   * @default no wait
   */
  readonly interval?: DurationInput;
  /**
   * The most pages to fetch (the `first` page included).  A collection
   * whose `next` chain goes on is refused at that page with a
   * {@link CollectionTraversalError}.
   * @default {@link DEFAULT_TRAVERSE_MAX_PAGES} (100)
   */
  readonly maxPages?: number;
  /**
   * The most items to yield; one more is refused with a
   * {@link CollectionTraversalError}.
   * @default {@link DEFAULT_TRAVERSE_MAX_ITEMS} (10,000)
   */
  readonly maxItems?: number;
}

/**
 * Thrown by {@link traverseCollection} when a collection would take more
 * pages or items than its bounds allow, or its `next` links go round in a
 * circle.
 * @since 0.3.0
 */
export class CollectionTraversalError extends RemoteRequestError {
  /**
   * @param url The collection's id (or the page's, for a circle).
   * @param message What went wrong and which option raises the bound.
   */
  constructor(url: string, message: string) {
    super(url, message);
    this.name = "CollectionTraversalError";
  }
}

const KNOWN_OPTIONS: readonly (keyof TraverseCollectionOptions)[] = [
  "documentLoader",
  "contextLoader",
  "suppressError",
  "interval",
  "maxPages",
  "maxItems",
];

interface Bounds {
  readonly documentLoader: DocumentLoader;
  readonly contextLoader: DocumentLoader;
  readonly suppressError: boolean;
  readonly intervalMs: number;
  readonly maxPages: number;
  readonly maxItems: number;
}

function resolveOptions(options: TraverseCollectionOptions): Bounds {
  if (typeof options !== "object" || options == null) {
    throw new TypeError("The options of traverseCollection() must be an object.");
  }
  assertKnownOptions(options, KNOWN_OPTIONS, { where: "traverseCollection()" });
  for (const name of ["documentLoader", "contextLoader"] as const) {
    if (options[name] != null && typeof options[name] !== "function") {
      throw new TypeError(`The ${name} option of traverseCollection() must be a function.`);
    }
  }
  let intervalMs = 0;
  if (options.interval != null) {
    const interval = options.interval;
    // Fedify disables the wait for zero and negative intervals; a negative
    // Temporal.Duration is not an error there, so it is not one here.
    const negative = typeof interval === "object" && "sign" in interval && interval.sign < 0;
    intervalMs = negative ? 0 : durationToMilliseconds(interval, "interval");
  }
  const documentLoader = options.documentLoader ??
    createFetchDocumentLoader({ userAgent: FALLBACK_USER_AGENT, allowPrivateAddress: false });
  return {
    documentLoader,
    contextLoader: options.contextLoader ?? documentLoader,
    suppressError: options.suppressError === true,
    intervalMs,
    maxPages: positiveIntegerOption(options.maxPages, "maxPages", DEFAULT_TRAVERSE_MAX_PAGES),
    maxItems: positiveIntegerOption(options.maxItems, "maxItems", DEFAULT_TRAVERSE_MAX_ITEMS),
  };
}

/**
 * Goes through a collection's items, fetching its pages one after the
 * other (`first`, then each page's `next`), as Fedify's
 * `traverseCollection()` does, but within bounds: at most `maxPages` pages
 * and `maxItems` items, and a page seen twice ends it.  Every page (and
 * every item listed only by URL) is loaded through the document loader, so
 * its limits on time, size and addresses hold for each fetch, and each
 * page may load at most 8 remote JSON-LD contexts.  A page whose id is on
 * another origin than the collection's is not trusted: it is fetched from
 * its own URL.  The options are checked when this is called, before
 * anything is fetched.
 * @param collection The collection, e.g. from `ctx.lookupObject()`.
 * @param options The loaders, the bounds, the interval between pages and
 *                `suppressError`.
 * @returns The items, in order: objects, links, or for an item that could
 *          not be parsed nothing.
 * @throws {TypeError} When `collection` is not a collection or an option
 *         is malformed.
 * @throws {UnknownOptionError} When an option is not one this function
 *         takes.
 * @throws {RangeError} When `maxPages`, `maxItems` or `interval` is out of
 *         range.
 * @throws {CollectionTraversalError} While iterating, when a bound is
 *         reached or the pages go round in a circle (unless
 *         `suppressError`); a failed fetch throws the loader's error.
 * @since 0.3.0
 * @example
 * ```ts
 * import { createFetchDocumentLoader, traverseCollection } from "@fedwork/core";
 * import { Collection } from "@fedify/vocab";
 *
 * const documentLoader = createFetchDocumentLoader({
 *   userAgent: "MyApp/1.0",
 *   allowPrivateAddress: false,
 * });
 * async function listOutbox(outbox: Collection): Promise<string[]> {
 *   const ids: string[] = [];
 *   for await (const item of traverseCollection(outbox, { documentLoader, maxPages: 10 })) {
 *     if (item.id != null) ids.push(item.id.href);
 *   }
 *   return ids;
 * }
 * ```
 */
export function traverseCollection(
  collection: Collection,
  options: TraverseCollectionOptions = {},
): AsyncIterable<APObject | Link> {
  if (
    typeof collection !== "object" || collection == null ||
    typeof (collection as { getFirst?: unknown }).getFirst !== "function"
  ) {
    throw new TypeError(
      "The first argument of traverseCollection() must be a Collection (or OrderedCollection).",
    );
  }
  return traverse(collection, resolveOptions(options));
}

async function* traverse(
  collection: Collection,
  bounds: Bounds,
): AsyncGenerator<APObject | Link> {
  const collectionId = collection.id?.href ?? "(a collection without id)";
  // A fresh context budget per page: one page naming a hundred remote
  // contexts costs at most eight loads.  A page that cannot be fetched is
  // caught here, so that suppressError logs it under Fedwork's category; an
  // item that cannot be fetched is skipped by the vocabulary's getter, as
  // in Fedify.
  const loaderOptions = (forItems = false) => ({
    documentLoader: bounds.documentLoader,
    contextLoader: withDocumentLoadBudget(bounds.contextLoader),
    suppressError: forItems && bounds.suppressError,
  });
  let items = 0;
  const refuse = (url: string, message: string): boolean => {
    const error = new CollectionTraversalError(url, message);
    if (!bounds.suppressError) throw error;
    logger.warn("Stopped traversing {collectionId}: {reason}", {
      collectionId,
      reason: message,
    });
    return false;
  };
  // Counts an item about to be yielded; false ends the traversal.
  const take = (): boolean =>
    ++items <= bounds.maxItems ||
    refuse(
      collectionId,
      `The collection ${collectionId} has more than ${bounds.maxItems} items; ` +
        "traverseCollection() stops there (raise the maxItems option to go further).",
    );

  let page: CollectionPage | null;
  try {
    page = await collection.getFirst(loaderOptions());
  } catch (error) {
    if (!bounds.suppressError) throw error;
    logFetchFailure(collectionId, error);
    return;
  }
  if (page == null) {
    for await (const item of collection.getItems(loaderOptions(true))) {
      if (!take()) return;
      yield item;
    }
    return;
  }
  const seen = new Set<string>();
  let pages = 1;
  while (page != null) {
    if (page.id != null) seen.add(page.id.href);
    for await (const item of page.getItems(loaderOptions(true))) {
      if (!take()) return;
      yield item;
    }
    const next = page.nextId;
    if (next == null) return;
    if (seen.has(next.href)) {
      refuse(
        next.href,
        `The page ${page.id?.href ?? "(without id)"} of ${collectionId} links back to ` +
          `${next.href}; traverseCollection() stops rather than go round.`,
      );
      return;
    }
    if (pages >= bounds.maxPages) {
      refuse(
        collectionId,
        `The collection ${collectionId} has more than ${bounds.maxPages} pages; ` +
          "traverseCollection() stops there (raise the maxPages option to go further).",
      );
      return;
    }
    if (bounds.intervalMs > 0) await sleep(bounds.intervalMs);
    try {
      page = await page.getNext(loaderOptions());
    } catch (error) {
      if (!bounds.suppressError) throw error;
      logFetchFailure(collectionId, error);
      return;
    }
    pages++;
  }
}

function logFetchFailure(collectionId: string, error: unknown): void {
  logger.warn("Stopped traversing {collectionId}: a page could not be fetched: {reason}", {
    collectionId,
    reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
