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

/**
 * One element of a key in the store's tree: the entry whose key ends here,
 * if any, held in the node itself (no object of its own per write), and
 * the nodes one element further down.
 */
interface KeyNode {
  /** The entry's value (a copy), or `undefined` when no key ends here. */
  value: unknown;
  /** When the entry expires, on the `performance.now()` clock. */
  expiresAt: number;
  children: Map<string, KeyNode> | undefined;
}

/** Set by `MemoryKvStore`'s static block: see {@link readInMemoryNow}. */
let readNow: (store: MemoryKvStore, key: KvKey) => unknown;
let writeNow: (
  store: MemoryKvStore,
  key: KvKey,
  value: unknown,
  options: KvStoreSetOptions | undefined,
  owned: boolean,
) => void;

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
  /**
   * The entries, in a tree with one level per key element.  Not one map
   * keyed by the key's JSON: building that string and hashing it on every
   * read and write cost more than the map lookups, while the elements of a
   * key (constants and ids the caller holds anyway) carry their hash with
   * them.  A prefix listing walks one subtree.
   */
  readonly #root: KeyNode = { value: undefined, expiresAt: Infinity, children: undefined };
  /** How many entries the tree holds, expired ones included. */
  #size = 0;
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
      checkKey(key);
      this.#remove(key);
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
    if (prefix != null) checkKey(prefix);
    const node = prefix == null ? this.#root : this.#find(prefix);
    const matches: KvStoreListEntry[] = [];
    if (node != null) {
      const key = prefix == null ? [] : [...prefix];
      this.#prune(node, performance.now(), { key, into: matches });
    }
    // Sorted as collected: each node's entry comes before its children's,
    // and the children are visited in key order.
    for (const { key, value } of matches) yield { key, value: copyValue(value) };
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

  static {
    // The synchronous access of Fedwork's own hot paths (see
    // readInMemoryNow()), given the private methods without making them
    // public API.
    readNow = (store, key) => {
      const entry = store.#read(key);
      return entry == null ? undefined : copyValue(entry.value);
    };
    writeNow = (store, key, value, options, owned) => store.#write(key, value, options, owned);
  }

  /**
   * Does nothing: the store holds no resources besides memory.  Present so
   * that the store can be used with `await using` like the other backends.
   * @since 0.1.0
   */
  [Symbol.asyncDispose](): Promise<void> {
    return Promise.resolve();
  }

  /** The node of `key` when it holds a live entry. */
  #read(key: KvKey): KeyNode | undefined {
    checkKey(key);
    const entry = this.#find(key);
    if (entry?.value === undefined) return undefined;
    if (entry.expiresAt <= performance.now()) {
      this.#remove(key);
      return undefined;
    }
    return entry;
  }

  /** The node of `key`, or `undefined` when no entry's key starts with it. */
  #find(key: KvKey): KeyNode | undefined {
    let node: KeyNode | undefined = this.#root;
    for (let i = 0; node != null && i < key.length; i++) node = node.children?.get(key[i]);
    return node;
  }

  /**
   * Writes an entry; `owned`: the caller hands `value` over (nothing else
   * holds it or anything in it), so it is kept without a copy.
   */
  #write(
    key: KvKey,
    value: unknown,
    options: KvStoreSetOptions | undefined,
    owned = false,
  ): void {
    checkKey(key);
    const ttl = options?.ttl == null ? undefined : durationToMilliseconds(options.ttl, "ttl");
    if (value === undefined) {
      this.#remove(key);
      return;
    }
    const copy = owned ? value : copyValue(value);
    const expiresAt = ttl == null ? Infinity : performance.now() + ttl;
    let node = this.#root;
    for (let i = 0; i < key.length; i++) {
      const children: Map<string, KeyNode> = node.children ??= new Map();
      let child = children.get(key[i]);
      if (child == null) {
        child = { value: undefined, expiresAt: Infinity, children: undefined };
        children.set(key[i], child);
      }
      node = child;
    }
    if (node.value === undefined) this.#size++;
    node.value = copy;
    node.expiresAt = expiresAt;
    // Sweeping once the writes since the last sweep outnumber the entries
    // keeps the cost per write constant on average.
    if (++this.#writesSinceSweep >= Math.max(1_000, this.#size)) this.#sweep();
  }

  /** Removes the entry at `key`, and the nodes left with nothing below. */
  #remove(key: KvKey): void {
    const path: KeyNode[] = [this.#root];
    for (let i = 0; i < key.length; i++) {
      const child = path[i].children?.get(key[i]);
      if (child == null) return;
      path.push(child);
    }
    const node = path[key.length];
    if (node.value === undefined) return;
    node.value = undefined;
    this.#size--;
    for (let i = key.length; i > 0; i--) {
      const { value, children } = path[i];
      if (value !== undefined || (children != null && children.size > 0)) break;
      path[i - 1].children!.delete(key[i - 1]);
    }
  }

  #sweep(): void {
    this.#writesSinceSweep = 0;
    this.#prune(this.#root, performance.now(), undefined);
  }

  /**
   * Removes the expired entries at and below `node`, and the nodes left
   * with nothing below them; with `listing`, also appends the live entries
   * there in key order.
   * @param listing The key of `node` (which the walk extends and restores)
   *                and where to append the entries, or `undefined` when
   *                only sweeping.
   * @returns Whether `node` was left with nothing at or below it.
   */
  #prune(
    node: KeyNode,
    now: number,
    listing: { readonly key: string[]; readonly into: KvStoreListEntry[] } | undefined,
  ): boolean {
    if (node.value !== undefined) {
      if (node.expiresAt <= now) {
        node.value = undefined;
        this.#size--;
      } else if (listing != null) {
        listing.into.push({ key: [...listing.key] as unknown as KvKey, value: node.value });
      }
    }
    const { children } = node;
    if (children != null) {
      if (listing == null) {
        for (const [name, child] of children) {
          if (this.#prune(child, now, undefined)) children.delete(name);
        }
      } else {
        // Element by element as strings compare: a key comes right after
        // its own prefix, before the keys that go on past it.
        for (const name of [...children.keys()].sort()) {
          listing.key.push(name);
          if (this.#prune(children.get(name)!, now, listing)) children.delete(name);
          listing.key.pop();
        }
      }
    }
    return node.value === undefined && (children == null || children.size === 0);
  }
}

/**
 * `store.get(key)` without the promise: the value at once.  For the status
 * records and cancellation markers each task run reads and writes, where a
 * promise and the turns spent awaiting it cost more than the read.
 * Internal.
 * @param store The store; {@link isInMemoryKvStore} must hold for it.
 * @param key The key.
 * @returns A copy of the value, or `undefined` when absent or expired.
 * @throws {TypeError} When the key is not a non-empty array of strings.
 * @since 0.3.0
 */
export function readInMemoryNow(store: MemoryKvStore, key: KvKey): unknown {
  return readNow(store, key);
}

/**
 * `store.set(key, value, options)` without the promise: written at once.
 * Internal; see {@link readInMemoryNow}.
 * @param store The store; {@link isInMemoryKvStore} must hold for it.
 * @param key The key.
 * @param value The value (copied, unless `owned`).
 * @param options The time to live.
 * @param owned Whether the caller hands `value` over: a value it made for
 *              the store, which neither it nor anything else holds, nor
 *              any object inside it.  Kept without a copy.
 * @throws {TypeError} As `set()` rejects.
 * @throws {RangeError} As `set()` rejects.
 * @since 0.3.0
 */
export function writeInMemoryNow(
  store: MemoryKvStore,
  key: KvKey,
  value: unknown,
  options?: KvStoreSetOptions,
  owned = false,
): void {
  writeNow(store, key, value, options, owned);
}

/**
 * Whether a store keeps its entries in this process's memory and answers
 * at once (a {@link MemoryKvStore}): gathering its calls into batches saves
 * no round trip.  A subclass does not count: it may override a method with
 * one that waits.  Internal.
 * @param kv The store.
 * @returns Whether it is a `MemoryKvStore` itself.
 * @since 0.3.0
 */
export function isInMemoryKvStore(kv: KvStore): kv is MemoryKvStore {
  return Object.getPrototypeOf(kv) === MemoryKvStore.prototype;
}

/** Throws unless `key` is a non-empty array of strings. */
function checkKey(key: KvKey): void {
  // A loop rather than every(): this runs for every read and write.
  let valid = Array.isArray(key) && key.length >= 1;
  for (let i = 0; valid && i < key.length; i++) valid = typeof key[i] === "string";
  if (!valid) {
    throw new TypeError(
      `A KvStore key must be a non-empty array of strings; got ${JSON.stringify(key)}.`,
    );
  }
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
