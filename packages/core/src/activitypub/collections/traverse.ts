import { getLogger } from "@logtape/logtape";
import type {
  Collection,
  CollectionPage,
  DocumentLoader,
  Link,
  Object as APObject,
  RemoteDocument,
} from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";
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
 * How many requests {@link traverseCollection} makes at most, by default:
 * 500.  Pages, items listed by URL and JSON-LD contexts each count one.  A
 * full traversal at the default page bound (100 pages of embedded items, as
 * Mastodon serves outboxes) takes about 100; the other 400 are for items
 * listed by URL (as followers collections list actors), each of which costs
 * a fetch.  A hostile collection listing thousands of URLs stops there.
 * @since 0.4.0
 */
export const DEFAULT_TRAVERSE_MAX_REQUESTS = 500;

/**
 * How long {@link traverseCollection} may spend fetching, by default: 60
 * seconds, counting only the time the traversal itself runs (fetches and
 * parsing), not the consumer's time between items nor the `interval`.
 * @since 0.4.0
 */
export const DEFAULT_TRAVERSE_TIMEOUT_MS = 60_000;

/**
 * The `User-Agent` of the document loader {@link traverseCollection} makes
 * when given none.
 */
const FALLBACK_USER_AGENT = "Fedwork (traverseCollection)";

/**
 * Options for {@link traverseCollection}: Fedify's, plus the bounds a
 * collection served by a stranger needs (pages, items, requests, time) and
 * a signal.
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
  /**
   * The most requests to make, over the whole traversal: every page, every
   * item listed by URL (or embedded from another origin, so fetched from
   * its own) and every remote JSON-LD context counts one; the contexts
   * bundled with Fedwork count none.  The request past it is refused with
   * a {@link CollectionTraversalError}.
   * @default {@link DEFAULT_TRAVERSE_MAX_REQUESTS} (500)
   * @since 0.4.0
   */
  readonly maxRequests?: number;
  /**
   * How long the traversal may run, in total: the time spent fetching and
   * reading pages and items, not the time the consumer holds an item nor
   * the `interval` waits.  When it passes, the fetch under way is aborted
   * and a {@link CollectionTraversalError} is thrown.  Each fetch also
   * keeps the document loader's own time limit.
   * @default 60 seconds ({@link DEFAULT_TRAVERSE_TIMEOUT_MS})
   * @since 0.4.0
   */
  readonly timeout?: DurationInput;
  /**
   * Aborts the traversal: the fetch under way is aborted (the signal is
   * passed to the document loader) and the iteration throws the signal's
   * reason, even with `suppressError`.
   * @default none
   * @since 0.4.0
   */
  readonly signal?: AbortSignal;
}

/**
 * Thrown by {@link traverseCollection} when a collection would take more
 * pages, items, requests or time than its bounds allow, or its `next`
 * links go round in a circle.
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
  "maxRequests",
  "timeout",
  "signal",
];

interface Bounds {
  readonly documentLoader: DocumentLoader;
  readonly contextLoader: DocumentLoader;
  readonly suppressError: boolean;
  readonly intervalMs: number;
  readonly maxPages: number;
  readonly maxItems: number;
  readonly maxRequests: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
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
  const { signal } = options;
  if (
    signal != null &&
    (typeof signal !== "object" || typeof (signal as AbortSignal).aborted !== "boolean")
  ) {
    throw new TypeError("The signal option of traverseCollection() must be an AbortSignal.");
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
    maxRequests: positiveIntegerOption(
      options.maxRequests,
      "maxRequests",
      DEFAULT_TRAVERSE_MAX_REQUESTS,
    ),
    timeoutMs: positiveDurationOption(options.timeout, "timeout", DEFAULT_TRAVERSE_TIMEOUT_MS),
    signal: signal ?? undefined,
  };
}

/**
 * Goes through a collection's items, fetching its pages one after the
 * other (`first`, then each page's `next`), as Fedify's
 * `traverseCollection()` does, but within bounds: at most `maxPages` pages,
 * `maxItems` items and `maxRequests` requests in all, `timeout` of its own
 * running time, and a page seen twice ends it; `signal` aborts it.  Every
 * page (and
 * every item listed only by URL) is loaded through the document loader, so
 * its limits on time, size and addresses hold for each fetch, and each
 * page may load at most 8 remote JSON-LD contexts.  A page whose id is on
 * another origin than the collection's is not trusted: it is fetched from
 * its own URL.  The options are checked when this is called, before
 * anything is fetched.
 * @param collection The collection, e.g. from `ctx.lookupObject()`.
 * @param options The loaders, the bounds, the interval between pages, the
 *                signal and `suppressError`.
 * @returns The items, in order: objects, links, or for an item that could
 *          not be parsed nothing.
 * @throws {TypeError} When `collection` is not a collection or an option
 *         is malformed.
 * @throws {UnknownOptionError} When an option is not one this function
 *         takes.
 * @throws {RangeError} When `maxPages`, `maxItems`, `maxRequests`,
 *         `timeout` or `interval` is out of range.
 * @throws {CollectionTraversalError} While iterating, when a bound (pages,
 *         items, requests, time) is reached or the pages go round in a
 *         circle (unless `suppressError`, which logs a warning and ends the
 *         iteration instead); a failed fetch throws the loader's error.
 * @throws {unknown} While iterating, the `signal`'s reason once it is
 *         aborted, `suppressError` or not.
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

/**
 * What one traversal has spent: its requests and its own running time (a
 * clock that runs only while the traversal does, paused while the consumer
 * holds an item or the interval passes).  The loaders it wraps refuse a
 * load past a bound, and abort the one under way when the time is up or
 * the caller's signal fires.
 */
class TraversalBudget {
  readonly #collectionId: string;
  readonly #bounds: Bounds;
  readonly #deadline = new AbortController();
  readonly #signal: AbortSignal;
  #requests = 0;
  #spentMs = 0;
  #since: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The bound that ended the traversal, once one has. */
  stopped: CollectionTraversalError | undefined;

  constructor(collectionId: string, bounds: Bounds) {
    this.#collectionId = collectionId;
    this.#bounds = bounds;
    this.#signal = bounds.signal == null
      ? this.#deadline.signal
      : AbortSignal.any([bounds.signal, this.#deadline.signal]);
  }

  /** Starts the clock (again). */
  resume(): void {
    if (this.#since != null) return;
    this.#since = Date.now();
    this.#timer = setTimeout(
      () => this.#expire(),
      Math.max(0, this.#bounds.timeoutMs - this.#spentMs),
    );
  }

  /** Stops the clock, adding the time since {@link resume}. */
  pause(): void {
    if (this.#since == null) return;
    this.#spentMs += Date.now() - this.#since;
    this.#since = undefined;
    clearTimeout(this.#timer);
  }

  #expire(): void {
    const ms = this.#bounds.timeoutMs;
    this.#stop(
      new CollectionTraversalError(
        this.#collectionId,
        `Traversing the collection ${this.#collectionId} took more than ${ms} ms; ` +
          "traverseCollection() stops there (raise the timeout option to go further).",
      ),
    );
    this.#deadline.abort(this.stopped);
  }

  #stop(error: CollectionTraversalError): CollectionTraversalError {
    this.stopped ??= error;
    return this.stopped;
  }

  /**
   * Throws the caller's abort reason, or the bound that ended the
   * traversal.
   */
  check(): void {
    this.#bounds.signal?.throwIfAborted();
    if (this.stopped != null) throw this.stopped;
  }

  /** Throws the caller's abort reason, if the caller aborted. */
  checkSignal(): void {
    this.#bounds.signal?.throwIfAborted();
  }

  /** Wraps a loader so that its loads count and keep the bounds. */
  wrap(inner: DocumentLoader): DocumentLoader {
    return async (url, options) => {
      if (this.#halted()) return this.#refused(url);
      // The contexts bundled with @fedify/vocab-runtime cost no request.
      if (!Object.hasOwn(preloadedContexts, url)) {
        const max = this.#bounds.maxRequests;
        if (this.#requests >= max) {
          this.#stop(
            new CollectionTraversalError(
              this.#collectionId,
              `Traversing the collection ${this.#collectionId} takes more than ${max} ` +
                "requests; traverseCollection() stops there (raise the maxRequests option " +
                "to go further).",
            ),
          );
          return this.#refused(url);
        }
        this.#requests++;
      }
      const signal = options?.signal == null
        ? this.#signal
        : AbortSignal.any([options.signal, this.#signal]);
      try {
        return await inner(url, { ...options, signal });
      } catch (error) {
        // An aborted load throws whatever the loader makes of the abort;
        // the caller sees why it was aborted instead.
        if (this.#halted()) return this.#refused(url);
        throw error;
      }
    };
  }

  #halted(): boolean {
    return this.stopped != null || (this.#bounds.signal?.aborted ?? false);
  }

  // A load refused because the traversal is over.  Without suppressError
  // the refusal is thrown, and the vocabulary's getter passes it on.  With
  // it, the getter would swallow a thrown refusal, log it and go on to the
  // next item (thousands of them, on a hostile page); a placeholder object
  // makes it yield instead, so that the traversal gets control back and
  // ends there, never passing the placeholder on.
  #refused(url: string): RemoteDocument {
    if (!this.#bounds.suppressError) this.check();
    return {
      contextUrl: null,
      documentUrl: url,
      document: { "@context": "https://www.w3.org/ns/activitystreams", id: url, type: "Object" },
    };
  }

  /** Waits `ms` with the clock stopped, unless the caller aborts. */
  async wait(ms: number): Promise<void> {
    this.pause();
    const signal = this.#bounds.signal;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        if (signal?.aborted) reject(signal.reason);
        else resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
    });
    this.resume();
  }
}

async function* traverse(
  collection: Collection,
  bounds: Bounds,
): AsyncGenerator<APObject | Link> {
  const collectionId = collection.id?.href ?? "(a collection without id)";
  const budget = new TraversalBudget(collectionId, bounds);
  const documentLoader = budget.wrap(bounds.documentLoader);
  const contextLoader = budget.wrap(bounds.contextLoader);
  // A fresh context budget per page: one page naming a hundred remote
  // contexts costs at most eight loads.  A page that cannot be fetched is
  // caught here, so that suppressError logs it under Fedwork's category; an
  // item that cannot be fetched is skipped by the vocabulary's getter, as
  // in Fedify.
  const loaderOptions = (forItems = false) => ({
    documentLoader,
    contextLoader: withDocumentLoadBudget(contextLoader),
    suppressError: forItems && bounds.suppressError,
  });
  let items = 0;
  const refuse = (error: CollectionTraversalError): false => {
    if (!bounds.suppressError) throw error;
    logger.warn("Stopped traversing {collectionId}: {reason}", {
      collectionId,
      reason: error.message,
    });
    return false;
  };
  // Counts an item about to be yielded; false ends the traversal.  With
  // suppressError the vocabulary's getter swallows a refused item load and
  // goes on, so a bound reached there is noticed here (or after the page).
  const take = (): boolean => {
    budget.checkSignal();
    if (budget.stopped != null) return refuse(budget.stopped);
    return ++items <= bounds.maxItems ||
      refuse(
        new CollectionTraversalError(
          collectionId,
          `The collection ${collectionId} has more than ${bounds.maxItems} items; ` +
            "traverseCollection() stops there (raise the maxItems option to go further).",
        ),
      );
  };
  // Ends the traversal after a page's items when a bound was reached.
  const pageDone = (): boolean => {
    budget.checkSignal();
    return budget.stopped == null || refuse(budget.stopped);
  };
  // A page that could not be fetched: the caller's abort or a bound first.
  const pageFailed = (error: unknown): false => {
    budget.checkSignal();
    if (budget.stopped != null) return refuse(budget.stopped);
    if (!bounds.suppressError) throw error;
    logFetchFailure(collectionId, error);
    return false;
  };

  budget.resume();
  try {
    let page: CollectionPage | null;
    try {
      page = await collection.getFirst(loaderOptions());
    } catch (error) {
      pageFailed(error);
      return;
    }
    if (page == null) {
      for await (const item of collection.getItems(loaderOptions(true))) {
        if (!take()) return;
        budget.pause();
        yield item;
        budget.resume();
      }
      pageDone();
      return;
    }
    const seen = new Set<string>();
    let pages = 1;
    while (page != null) {
      if (page.id != null) seen.add(page.id.href);
      for await (const item of page.getItems(loaderOptions(true))) {
        if (!take()) return;
        budget.pause();
        yield item;
        budget.resume();
      }
      if (!pageDone()) return;
      const next = page.nextId;
      if (next == null) return;
      if (seen.has(next.href)) {
        refuse(
          new CollectionTraversalError(
            next.href,
            `The page ${page.id?.href ?? "(without id)"} of ${collectionId} links back to ` +
              `${next.href}; traverseCollection() stops rather than go round.`,
          ),
        );
        return;
      }
      if (pages >= bounds.maxPages) {
        refuse(
          new CollectionTraversalError(
            collectionId,
            `The collection ${collectionId} has more than ${bounds.maxPages} pages; ` +
              "traverseCollection() stops there (raise the maxPages option to go further).",
          ),
        );
        return;
      }
      if (bounds.intervalMs > 0) await budget.wait(bounds.intervalMs);
      try {
        page = await page.getNext(loaderOptions());
      } catch (error) {
        pageFailed(error);
        return;
      }
      pages++;
    }
  } finally {
    budget.pause();
  }
}

function logFetchFailure(collectionId: string, error: unknown): void {
  logger.warn("Stopped traversing {collectionId}: a page could not be fetched: {reason}", {
    collectionId,
    reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  });
}
