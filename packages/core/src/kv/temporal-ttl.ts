import { toTemporalDuration } from "../time/duration.ts";
import type { KvKey, KvStore, KvStoreSetOptions } from "./kv-store.ts";
import { isInMemoryKvStore } from "./memory-kv-store.ts";

/**
 * Wraps a key–value store so that every TTL it receives is a
 * `Temporal.Duration`, whatever form the caller wrote (`{ hours: 1 }`,
 * `"PT1H"`…).  The federation wraps the store it is given, so that a store
 * written for Fedify, which calls methods such as `round()` on a TTL, works
 * with every part of Fedwork that writes to it.  Internal.
 * @param store The store, as the user passed it.
 * @returns A store with the same methods (`getMany`, `setMany` and `cas`
 *          only when `store` has them); a `MemoryKvStore` itself as it is,
 *          since it takes a TTL in any form.
 * @since 0.2.0
 */
export function withTemporalTtl(store: KvStore): KvStore {
  // Unwrapped, it is also recognised as a store in memory (no batching).
  if (isInMemoryKvStore(store)) return store;
  const wrapped: KvStore = {
    get: <T>(key: KvKey) => store.get<T>(key),
    set: (key, value, options) => store.set(key, value, temporalTtl(options)),
    delete: (key) => store.delete(key),
    list: (prefix) => store.list(prefix),
  };
  const getMany = store.getMany;
  if (typeof getMany === "function") {
    wrapped.getMany = <T>(keys: readonly KvKey[]) =>
      getMany.call(store, keys) as Promise<(T | undefined)[]>;
  }
  const setMany = store.setMany;
  if (typeof setMany === "function") {
    wrapped.setMany = (entries) =>
      setMany.call(
        store,
        entries.map((entry) =>
          entry.options?.ttl == null ? entry : { ...entry, options: temporalTtl(entry.options) }
        ),
      );
  }
  const cas = store.cas;
  if (typeof cas === "function") {
    wrapped.cas = (key, expectedValue, newValue, options) =>
      cas.call(store, key, expectedValue, newValue, temporalTtl(options));
  }
  return wrapped;
}

function temporalTtl(options: KvStoreSetOptions | undefined): KvStoreSetOptions | undefined {
  if (options?.ttl == null) return options;
  const ttl = toTemporalDuration(options.ttl, "ttl");
  // Most TTLs are Durations already (Fedwork's own records): no copy.
  return ttl === options.ttl ? options : { ...options, ttl };
}
