import { assertKnownOptions } from "../options/known-options.ts";
import { durationToMilliseconds } from "../time/duration.ts";
import { copyValue } from "./copy-value.ts";
import type {
  KvKey,
  KvStore,
  KvStoreListEntry,
  KvStoreSetManyEntry,
  KvStoreSetOptions,
} from "./kv-store.ts";

interface MemoryEntry {
  readonly value: unknown;
  /** When the entry expires, on the `performance.now()` clock. */
  readonly expiresAt: number;
}

/**
 * A {@link KvStore} that keeps entries in the memory of the current process.
 * Good for development, tests and single-process deployments; entries are
 * lost when the process exits.
 *
 * - Values are copied as `structuredClone()` copies them both when written
 *   and when read, so changing an object you passed in or got back never
 *   changes what the store holds.  Plain objects, arrays and dates are
 *   copied by a quicker walk with the same result.
 * - `undefined` means "absent": writing `undefined` removes the entry.
 * - Expired entries are never returned or listed.  They are removed when a
 *   read or a listing comes across them, and by a sweep that runs every so
 *   many writes, so that entries nobody reads again do not pile up.
 * - {@link MemoryKvStore.list} yields entries sorted by key, element by
 *   element; an entry whose key equals the prefix is included.
 *
 * @example
 * ```ts
 * import { MemoryKvStore } from "@fedwork/core";
 *
 * const kv = new MemoryKvStore();
 * await kv.set(["session", "abc"], { user: "alice" }, { ttl: { minutes: 30 } });
 * const session = await kv.get<{ user: string }>(["session", "abc"]);
 * ```
 * @since 0.1.0
 */
export class MemoryKvStore implements KvStore, AsyncDisposable {
  #entries = new Map<string, MemoryEntry>();
  #writesSinceSweep = 0;

  /**
   * Creates an empty store.  It takes no options: one given anyway (a
   * size limit or a default TTL meant for another store) throws rather
   * than being ignored.
   * @throws {UnknownOptionError} When called with an options object that
   *         holds any option.
   * @since 0.1.0
   */
  constructor(...args: []) {
    assertKnownOptions((args as unknown[])[0], [], { where: "new MemoryKvStore()" });
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns A copy of the value, or `undefined` when absent or expired.
   * @throws {TypeError} When the key is not a non-empty array of strings.
   * @since 0.1.0
   */
  get<T = unknown>(key: KvKey): Promise<T | undefined> {
    try {
      const entry = this.#read(key);
      return Promise.resolve(entry == null ? undefined : copyValue(entry.value) as T);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Reads several values in one call.
   * @param keys The keys; may be empty and may repeat a key.
   * @returns Copies of the values in the order of `keys`, `undefined` where
   *          a key is absent or expired.
   * @throws {TypeError} When a key is not a non-empty array of strings.
   * @since 0.3.0
   */
  getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    try {
      const values = keys.map((key) => {
        const entry = this.#read(key);
        return entry == null ? undefined : copyValue(entry.value) as T;
      });
      return Promise.resolve(values);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Writes a value; writing `undefined` removes the entry.
   * @param key The key.
   * @param value The value; it is copied with `structuredClone()`.
   * @param options The time to live; forever when absent.
   * @throws {TypeError} When the key is not a non-empty array of strings,
   *                     the `ttl` is not a duration or the value cannot be
   *                     cloned.
   * @throws {RangeError} When the `ttl` is negative.
   * @since 0.1.0
   */
  set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    try {
      this.#write(key, value, options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Writes several values in one call, in order; writing `undefined`
   * removes the entry.
   * @param entries The writes; values are copied with `structuredClone()`.
   * @throws {TypeError} When a key is not a non-empty array of strings, a
   *                     `ttl` is not a duration or a value cannot be cloned
   *                     (the entries before it are written).
   * @throws {RangeError} When a `ttl` is negative.
   * @since 0.3.0
   */
  setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    try {
      for (const entry of entries) this.#write(entry.key, entry.value, entry.options);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Removes an entry; removing an absent key is not an error.
   * @param key The key.
   * @throws {TypeError} When the key is not a non-empty array of strings.
   * @since 0.1.0
   */
  delete(key: KvKey): Promise<void> {
    try {
      this.#entries.delete(encodeKey(key));
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Lists the live entries whose key starts with `prefix`, element by
   * element (`["a"]` is a prefix of `["a", "b"]` and of `["a"]`, not of
   * `["ab"]`), sorted by key.  The entries are those present when the
   * listing starts; values are copies.
   * @param prefix The key prefix; every entry when omitted.
   * @returns The entries.
   * @throws {TypeError} When the prefix is not a non-empty array of strings.
   * @since 0.1.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    // An entry's key starts with the prefix, element by element, exactly
    // when its encoding starts with the prefix's, less the closing bracket,
    // followed by a comma or a bracket: each element's JSON string ends at
    // its one unescaped closing quote.
    const head = prefix == null ? undefined : encodeKey(prefix).slice(0, -1);
    const now = performance.now();
    const matches: { readonly key: KvKey; readonly entry: MemoryEntry }[] = [];
    for (const [encoded, entry] of this.#entries) {
      if (entry.expiresAt <= now) {
        this.#entries.delete(encoded);
        continue;
      }
      if (head != null) {
        if (!encoded.startsWith(head)) continue;
        const next = encoded.charCodeAt(head.length);
        if (next !== COMMA && next !== CLOSING_BRACKET) continue;
      }
      // Keys are kept encoded only (no copy of the array per write), and
      // parsed back for the entries listed.
      matches.push({ key: JSON.parse(encoded), entry });
    }
    matches.sort((a, b) => compareKeys(a.key, b.key));
    for (const { key, entry } of matches) yield { key, value: copyValue(entry.value) };
  }

  /**
   * Replaces the value at `key` with `newValue` if the current value deeply
   * equals `expectedValue`.  `undefined` means absent, both ways: expect
   * `undefined` to create an entry only if there is none, and write
   * `undefined` to remove it.  Values are compared as JSON would see them
   * (object key order and `undefined` properties do not matter).
   * @param key The key.
   * @param expectedValue The value expected to be there now.
   * @param newValue The value to write; it is copied with `structuredClone()`.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   * @throws {TypeError} When the key is not a non-empty array of strings,
   *                     the `ttl` is not a duration or the new value cannot
   *                     be cloned.
   * @throws {RangeError} When the `ttl` is negative.
   * @since 0.1.0
   */
  cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options?: KvStoreSetOptions,
  ): Promise<boolean> {
    // Everything below runs synchronously, so no other call can interleave:
    // that is what makes the swap atomic.
    try {
      const current = this.#read(key)?.value;
      if (!jsonEquals(current, expectedValue)) return Promise.resolve(false);
      this.#write(key, newValue, options);
      return Promise.resolve(true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Does nothing: the store holds no resources besides memory.  Present so
   * that the store can be used with `await using` like the other backends.
   * @since 0.1.0
   */
  [Symbol.asyncDispose](): Promise<void> {
    return Promise.resolve();
  }

  #read(key: KvKey): MemoryEntry | undefined {
    const encoded = encodeKey(key);
    const entry = this.#entries.get(encoded);
    if (entry == null) return undefined;
    if (entry.expiresAt <= performance.now()) {
      this.#entries.delete(encoded);
      return undefined;
    }
    return entry;
  }

  #write(key: KvKey, value: unknown, options: KvStoreSetOptions | undefined): void {
    const encoded = encodeKey(key);
    const ttl = options?.ttl == null ? undefined : durationToMilliseconds(options.ttl, "ttl");
    if (value === undefined) {
      this.#entries.delete(encoded);
      return;
    }
    this.#entries.set(encoded, {
      value: copyValue(value),
      expiresAt: ttl == null ? Infinity : performance.now() + ttl,
    });
    // Sweeping once the writes since the last sweep outnumber the entries
    // keeps the cost per write constant on average.
    if (++this.#writesSinceSweep >= Math.max(1_000, this.#entries.size)) this.#sweep();
  }

  #sweep(): void {
    this.#writesSinceSweep = 0;
    const now = performance.now();
    for (const [encoded, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(encoded);
    }
  }
}

const COMMA = 0x2c;
const CLOSING_BRACKET = 0x5d;

function encodeKey(key: KvKey): string {
  // A loop rather than every(): this runs for every read and write.
  let valid = Array.isArray(key) && key.length >= 1;
  for (let i = 0; valid && i < key.length; i++) valid = typeof key[i] === "string";
  if (!valid) {
    throw new TypeError(
      `A KvStore key must be a non-empty array of strings; got ${JSON.stringify(key)}.`,
    );
  }
  return JSON.stringify(key);
}

function compareKeys(a: KvKey, b: KvKey): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    if (a[i] < b[i]) return -1;
    if (a[i] > b[i]) return 1;
  }
  return a.length - b.length;
}

/** Deep equality for JSON-compatible values. */
function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => jsonEquals(item, other[index]));
  }
  const aRecord = a as Record<string, unknown>;
  const bRecord = b as Record<string, unknown>;
  // Properties whose value is undefined do not exist in JSON.
  const aKeys = Object.keys(aRecord).filter((k) => aRecord[k] !== undefined);
  const bKeys = Object.keys(bRecord).filter((k) => bRecord[k] !== undefined);
  if (aKeys.length !== bKeys.length) return false;
  return aKeys.every((k) => Object.hasOwn(bRecord, k) && jsonEquals(aRecord[k], bRecord[k]));
}
