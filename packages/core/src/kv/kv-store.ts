import type { DurationInput } from "../time/duration.ts";

/**
 * A key in a {@link KvStore}: a non-empty array of strings.  Keys are
 * compared element by element, so `["a", "b"]` starts with the prefix
 * `["a"]` but `["ab"]` does not.
 * @since 0.1.0
 */
export type KvKey = readonly [string, ...string[]];

/**
 * Options for {@link KvStore.set} and {@link KvStore.cas}.
 * @since 0.1.0
 */
export interface KvStoreSetOptions {
  /** How long the entry lives; forever when absent. */
  readonly ttl?: DurationInput;
}

/**
 * One write of {@link KvStore.setMany}: what {@link KvStore.set} takes.
 * @since 0.3.0
 */
export interface KvStoreSetManyEntry {
  /** The key. */
  readonly key: KvKey;
  /** A JSON-compatible value. */
  readonly value: unknown;
  /** The time to live; forever when absent. */
  readonly options?: KvStoreSetOptions;
}

/**
 * One entry yielded by {@link KvStore.list}.
 * @since 0.1.0
 */
export interface KvStoreListEntry {
  /** The entry's key. */
  readonly key: KvKey;
  /** The entry's value. */
  readonly value: unknown;
}

/**
 * A key–value store for caches, deduplication records and other small
 * state.  Values are JSON-compatible.  Structurally compatible with Fedify's
 * `KvStore`.
 * @since 0.1.0
 */
export interface KvStore {
  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   */
  get<T = unknown>(key: KvKey): Promise<T | undefined>;

  /**
   * Reads several values at once, in as few round trips as the store
   * allows (one `MGET` on Redis, one statement on PostgreSQL and SQLite).
   * Optional: a caller that finds it absent calls {@link KvStore.get} for
   * each key.  The values are those `get()` would return, though not
   * necessarily read at one instant: a write made while the call runs may
   * be seen for some keys and not for others.
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @since 0.3.0
   */
  getMany?<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]>;

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live.
   */
  set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void>;

  /**
   * Writes several values, in as few round trips as the store allows (one
   * pipeline on Redis, one statement on PostgreSQL, one transaction on
   * SQLite).  Each entry is written as {@link KvStore.set} would write it;
   * where a key repeats, the last entry wins.  Optional: a caller that
   * finds it absent calls `set()` for each entry.  Not atomic: when it
   * rejects, some entries may have been written.
   * @param entries The writes; may be empty.
   * @since 0.3.0
   */
  setMany?(entries: readonly KvStoreSetManyEntry[]): Promise<void>;

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   */
  delete(key: KvKey): Promise<void>;

  /**
   * Lists the entries whose key starts with `prefix` (every entry when
   * omitted), skipping expired ones.
   * @param prefix The key prefix.
   */
  list(prefix?: KvKey): AsyncIterable<KvStoreListEntry>;

  /**
   * Atomically replaces the value at `key` with `newValue` if and only if
   * the current value deeply equals `expectedValue` (`undefined` meaning
   * absent).  Optional.
   * @param key The key.
   * @param expectedValue The value expected to be there now.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   */
  cas?(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options?: KvStoreSetOptions,
  ): Promise<boolean>;
}
