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
 * The parameters of {@link kvCache}, Fedify's with a size bound.
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
}

const KNOWN = ["loader", "kv", "prefix", "rules", "maxDocumentBytes"];

/**
 * Puts a cache backed by a {@link KvStore} in front of a document loader,
 * as Fedify's `kvCache()` does: a cached document is answered from the
 * store until its rule's TTL passes; the well-known JSON-LD contexts are
 * answered from memory.  Failures of the store are logged and fall back to
 * the loader.
 * @param parameters The loader, the store, the rules and the size bound.
 * @returns The cached document loader.
 * @throws {TypeError} When a parameter is missing, unknown or malformed.
 * @throws {RangeError} When a TTL is not positive or passes 30 days, or
 *         `maxDocumentBytes` is negative.
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

  return async (url, options) => {
    if (Object.hasOwn(preloadedContexts, url)) {
      return { contextUrl: null, documentUrl: url, document: preloadedContexts[url] };
    }
    const rule = match(url);
    if (rule == null || url.length > MAX_CACHED_URL_LENGTH) return await loader(url, options);
    const key: KvKey = [...prefix, url];
    try {
      const cached = await kv.get<RemoteDocument>(key);
      if (cached != null) return cached;
    } catch (error) {
      logger.warn("Reading the cached document of {url} failed: {reason}", {
        url,
        reason: messageOf(error),
      });
    }
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
    try {
      await kv.set(key, loaded, { ttl: rule.ttl });
    } catch (error) {
      logger.warn("Caching the document of {url} failed: {reason}", {
        url,
        reason: messageOf(error),
      });
    }
    return loaded;
  };
}
