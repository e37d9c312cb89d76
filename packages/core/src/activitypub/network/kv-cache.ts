import type { DocumentLoader, RemoteDocument } from "@fedify/vocab-runtime";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { nonNegativeIntegerOption } from "../../options/value-options.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import { messageOf } from "../json-values.ts";

const logger = getLogger(["fedwork", "activitypub", "kv-cache"]);

const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000;

// URLs longer than this are loaded but not cached: a key has to fit every
// backend's key column, and a real object's id is far shorter.
const MAX_CACHED_URL_LENGTH = 2048;

/**
 * What a {@link kvCache} rule matches: a URL exactly (a string or a `URL`),
 * or anything with a `test(url)` method such as a `URLPattern`.
 * @since 0.3.0
 */
export type KvCacheUrlPattern = string | URL | { test(input: string): boolean };

/**
 * The parameters of {@link kvCache}, Fedify's with size bounds.
 * @since 0.3.0
 */
export interface KvCacheParameters {
  /** The document loader to put a cache in front of. */
  readonly loader: DocumentLoader;
  /** The key–value store holding the cached documents. */
  readonly kv: KvStore;
  /**
   * The prefix of the cache's keys.
   * @default `["_fedwork", "remoteDocument"]`
   */
  readonly prefix?: KvKey;
  /**
   * How long documents are kept, by URL: `[pattern, ttl]` pairs, the first
   * matching one deciding; a URL no rule matches is not cached.  Each TTL
   * is positive and at most 30 days.
   * @default every URL for 5 minutes
   */
  readonly rules?: readonly (readonly [KvCacheUrlPattern, DurationInput])[];
  /**
   * The largest document cached, in bytes of its JSON; larger ones are
   * returned but not stored, so that one huge document cannot fill the
   * store.
   * @default 256 KiB
   */
  readonly maxDocumentBytes?: number;
  /**
   * The most bytes (of the documents' JSON) this cache keeps stored at
   * once; storing past it deletes the oldest documents it stored first.
   * Counted in memory, per `kvCache()` (so per federation, per process):
   * another process sharing the store counts its own.
   * @default 16 MiB
   * @since 0.4.0
   */
  readonly maxTotalBytes?: number;
}

const KNOWN = ["loader", "kv", "prefix", "rules", "maxDocumentBytes", "maxTotalBytes"];

// What an entry costs in the accounting beyond its document: its URL and
// the bookkeeping, so that many tiny documents are bounded too.
const ENTRY_OVERHEAD_BYTES = 64;

/** What a cache keeps of a document it stored, to evict it later. */
interface StoredEntry {
  readonly key: KvKey;
  readonly bytes: number;
  readonly expiresAt: number;
}

/** The parts of a {@link kvCache} that a loader for keys reads past. */
interface KvCacheParts {
  readonly loader: DocumentLoader;
  read(url: string): Promise<RemoteDocument | undefined>;
}

const cacheParts = new WeakMap<DocumentLoader, KvCacheParts>();

/**
 * Lets {@link loadWithoutStoring} see through `wrapper`, a loader that
 * passes every document `inner` loads through `check`: when `inner` is a
 * {@link kvCache}, loading through `wrapper` without storing reads the
 * cache and loads past it as `inner` would, and still checks.  Internal:
 * the document limits wrap the federation's loader so.
 * @param wrapper The wrapping loader.
 * @param inner The loader it wraps.
 * @param check What the wrapper does to each document it returns.
 * @since 0.4.0
 */
export function carryCacheParts(
  wrapper: DocumentLoader,
  inner: DocumentLoader,
  check: (url: string, loaded: RemoteDocument) => RemoteDocument,
): void {
  const parts = cacheParts.get(inner);
  if (parts == null) return;
  cacheParts.set(wrapper, {
    loader: async (url, options) => check(url, await parts.loader(url, options)),
    read: async (url) => {
      const cached = await parts.read(url);
      return cached == null ? undefined : check(url, cached);
    },
  });
}

/**
 * Loads a document through `loader` without letting a {@link kvCache} in
 * it store the document: a cached copy is still answered, but a fetched
 * one is not kept.  Internal: the public-key fetcher loads key documents
 * this way, since any stranger can make it fetch one (by naming a new key
 * id) and it keeps the little it needs itself.  A loader that is not a
 * `kvCache()` is simply called.
 * @param loader The document loader, maybe a `kvCache()`.
 * @param url The document's URL.
 * @returns The document.
 * @since 0.4.0
 */
export async function loadWithoutStoring(
  loader: DocumentLoader,
  url: string,
): Promise<RemoteDocument> {
  const parts = cacheParts.get(loader);
  if (parts == null) return await loader(url);
  return await parts.read(url) ?? await parts.loader(url);
}

/**
 * Puts a cache backed by a {@link KvStore} in front of a document loader,
 * as Fedify's `kvCache()` does: a cached document is answered from the
 * store until its rule's TTL passes; the well-known JSON-LD contexts are
 * answered from memory.  Failures of the store are logged and fall back to
 * the loader.  At most `maxTotalBytes` of documents are kept stored at
 * once (the oldest are deleted to make room), and documents fetched to
 * look up a public key (which anyone can make a server do, by naming a new
 * key id) are not stored at all: the key fetcher keeps the key itself.
 * @param parameters The loader, the store, the rules and the size bound.
 * @returns The cached document loader.
 * @throws {TypeError} When a parameter is missing, unknown or malformed.
 * @throws {RangeError} When a TTL is not positive or passes 30 days, or
 *         `maxDocumentBytes` or `maxTotalBytes` is negative.
 * @since 0.3.0
 * @example
 * ```ts
 * import { createFetchDocumentLoader, kvCache, MemoryKvStore } from "@fedwork/core";
 *
 * const documentLoader = kvCache({
 *   loader: createFetchDocumentLoader({ userAgent: "MyApp/1.0", allowPrivateAddress: false }),
 *   kv: new MemoryKvStore(),
 *   rules: [[new URL("https://www.w3.org/ns/activitystreams"), { days: 30 }]],
 * });
 * ```
 */
export function kvCache(parameters: KvCacheParameters): DocumentLoader {
  assertKnownOptions(parameters, KNOWN, { where: "kvCache()" });
  const { loader, kv } = parameters;
  if (typeof loader !== "function") {
    throw new TypeError("The kvCache() loader parameter must be a document loader function.");
  }
  if (kv == null || typeof kv.get !== "function" || typeof kv.set !== "function") {
    throw new TypeError("The kvCache() kv parameter must be a KvStore.");
  }
  const prefix = parameters.prefix ?? ["_fedwork", "remoteDocument"];
  const maxDocumentBytes = nonNegativeIntegerOption(
    parameters.maxDocumentBytes,
    "maxDocumentBytes",
    256 * 1024,
  );
  const maxTotalBytes = nonNegativeIntegerOption(
    parameters.maxTotalBytes,
    "maxTotalBytes",
    16 * 1024 * 1024,
  );
  const rules = (parameters.rules ?? [[{ test: () => true }, { minutes: 5 }]]).map(
    ([pattern, ttl], index) => {
      const name = `rules[${index}]`;
      const ms = durationToMilliseconds(ttl, name);
      if (ms <= 0 || ms > MAX_TTL_MS) {
        throw new RangeError(
          `The kvCache() ${name} TTL must be positive and at most 30 days; got ${ms} ms.`,
        );
      }
      if (
        typeof pattern !== "string" && !(pattern instanceof URL) &&
        typeof pattern?.test !== "function"
      ) {
        throw new TypeError(
          `The kvCache() ${name} pattern must be a URL string, a URL or a URLPattern.`,
        );
      }
      return { pattern, ttl: { milliseconds: ms } };
    },
  );
  const match = (url: string) =>
    rules.find(({ pattern }) =>
      typeof pattern === "string"
        ? pattern === url
        : pattern instanceof URL
        ? pattern.href === url
        : pattern.test(url)
    );

  // The documents this cache stored, oldest first, and their total cost.
  const stored = new Map<string, StoredEntry>();
  let storedBytes = 0;
  const forget = (url: string) => {
    const entry = stored.get(url);
    if (entry == null) return;
    stored.delete(url);
    storedBytes -= entry.bytes;
  };
  // Makes room for `bytes` more: forgets the oldest documents stored at
  // once, and returns the deletion of those still in the store.
  const evictFor = (bytes: number): Promise<void> | undefined => {
    const now = Date.now();
    const evicted: KvKey[] = [];
    for (const [url, entry] of stored) {
      if (storedBytes + bytes <= maxTotalBytes) break;
      forget(url);
      // An expired document is gone from the store already.
      if (entry.expiresAt > now) evicted.push(entry.key);
    }
    if (evicted.length === 0) return undefined;
    return deleteAll(evicted);
  };
  const deleteAll = async (evicted: KvKey[]) => {
    logger.debug("Evicting {count} cached documents to stay within {maxTotalBytes} bytes.", {
      count: evicted.length,
      maxTotalBytes,
    });
    await Promise.all(evicted.map(async (key) => {
      try {
        await kv.delete(key);
      } catch (error) {
        logger.warn("Evicting the cached document {key} failed: {reason}", {
          key: key.join("/"),
          reason: messageOf(error),
        });
      }
    }));
  };

  const read = async (url: string): Promise<RemoteDocument | undefined> => {
    try {
      return await kv.get<RemoteDocument>([...prefix, url]) ?? undefined;
    } catch (error) {
      logger.warn("Reading the cached document of {url} failed: {reason}", {
        url,
        reason: messageOf(error),
      });
      return undefined;
    }
  };

  const cached: DocumentLoader = async (url, options) => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return { contextUrl: null, documentUrl: url, document: preloadedContexts[url] };
    }
    const rule = match(url);
    if (rule == null || url.length > MAX_CACHED_URL_LENGTH) return await loader(url, options);
    const hit = await read(url);
    if (hit != null) return hit;
    const loaded = await loader(url, options);
    const bytes = new TextEncoder().encode(JSON.stringify(loaded)).byteLength;
    if (bytes > maxDocumentBytes) {
      logger.debug("The document of {url} ({bytes} bytes) is too large to cache.", {
        url,
        bytes,
        maxDocumentBytes,
      });
      return loaded;
    }
    const cost = bytes + url.length + ENTRY_OVERHEAD_BYTES;
    if (cost > maxTotalBytes) return loaded;
    // Counted before anything is awaited, so that concurrent loads see
    // each other's documents.
    forget(url);
    const evicting = evictFor(cost);
    const key: KvKey = [...prefix, url];
    stored.set(url, {
      key,
      bytes: cost,
      expiresAt: Date.now() + rule.ttl.milliseconds,
    });
    storedBytes += cost;
    try {
      await evicting;
      await kv.set(key, loaded, { ttl: rule.ttl });
    } catch (error) {
      forget(url);
      logger.warn("Caching the document of {url} failed: {reason}", {
        url,
        reason: messageOf(error),
      });
    }
    return loaded;
  };
  cacheParts.set(cached, { loader, read });
  return cached;
}
