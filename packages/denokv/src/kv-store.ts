import {
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetManyEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import {
  checkKvOption,
  checkPrefixOption,
  type DenoKv,
  type DenoKvEntry,
  jsonValuesEqual,
} from "./deno-kv.ts";
import { resolveConstructorArguments } from "./constructor-arguments.ts";
import { withLockRetries } from "./lock-retries.ts";
import { DenoKvClosedError } from "./errors.ts";

/**
 * Options for {@link DenoKvStore}.
 * @since 0.3.0
 */
export interface DenoKvStoreOptions {
  /**
   * An open Deno KV database, e.g. `await Deno.openKv()`.  The store never
   * closes it.  Required.
   */
  readonly kv: DenoKv;

  /**
   * The Deno KV key prefix under which the store keeps its entries.
   * `["fedwork", "kv"]` by default.
   */
  readonly prefix?: readonly string[];
}

/** What the store writes under each key: the JSON text and its expiry. */
interface StoredValue {
  /** The value as JSON text. */
  readonly json: string;
  /** When the entry expires (milliseconds since the epoch), or `null`. */
  readonly expires: number | null;
}

const WHERE = "new DenoKvStore()";
// The most keys one getMany() call of Deno KV takes.
const DENO_KV_GET_MANY_LIMIT = 10;
// The most writes setMany() puts in one atomic operation.
const DENO_KV_SET_MANY_CHUNK = 10;

/**
 * A {@link KvStore} on Deno KV (`Deno.openKv()`): a local SQLite-backed
 * file on Deno, or Deno Deploy's database.  Values are stored as JSON text
 * (so a value holds at most Deno KV's 64 KiB per value, less the
 * wrapping); `cas()` is an atomic operation checked against the entry's
 * versionstamp, retried while only the version changed; a TTL becomes Deno
 * KV's `expireIn` and an expiry time stored beside the value, so that an
 * expired entry is never returned even before Deno KV deletes it.
 *
 * @example
 * ```ts ignore
 * import { DenoKvStore } from "@fedwork/denokv";
 *
 * const kv = new DenoKvStore({ kv: await Deno.openKv("fedwork.kv") });
 * await kv.set(["greeting", "en"], "hello", { ttl: { minutes: 5 } });
 * ```
 * @since 0.3.0
 */
export class DenoKvStore implements KvStore, AsyncDisposable {
  readonly #kv: DenoKv;
  readonly #prefix: readonly string[];
  #closed = false;

  /**
   * Creates a store on an open Deno KV database.
   * @param options The database and the key prefix.
   * @throws {TypeError} When an option is missing, unknown or of the wrong
   *                     type (its name is in the message).
   * @since 0.3.0
   */
  constructor(options: DenoKvStoreOptions);
  /**
   * Creates a store on an open Deno KV database, as `@fedify/denokv`'s
   * `new DenoKvStore(kv)` does.  The store never closes the database.
   * @param kv An open Deno KV database, e.g. `await Deno.openKv()`.
   * @param options The key prefix.
   * @throws {TypeError} When the first argument is not a Deno KV database or
   *                     an option is unknown or of the wrong type.
   * @since 0.4.0
   */
  constructor(kv: DenoKv, options?: Omit<DenoKvStoreOptions, "kv">);
  constructor(first: DenoKvStoreOptions | DenoKv, second?: Omit<DenoKvStoreOptions, "kv">) {
    const options = resolveConstructorArguments<DenoKvStoreOptions>(
      first,
      second,
      WHERE,
      "new DenoKvStore(kv)",
    );
    assertKnownOptions(options, ["kv", "prefix"], { where: WHERE });
    this.#kv = withLockRetries(checkKvOption(options.kv, WHERE));
    this.#prefix = checkPrefixOption(options.prefix, ["fedwork", "kv"], WHERE);
  }

  #key(key: KvKey): string[] {
    if (this.#closed) throw new DenoKvClosedError("DenoKvStore");
    return [...this.#prefix, ...key];
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const entry = await this.#kv.get(this.#key(key));
    return liveValue(entry) as T | undefined;
  }

  /**
   * Reads several values with Deno KV's `getMany()`, ten keys per call
   * (its limit), the calls sent at once; with a database object that has
   * no `getMany()`, one `get()` per key, also at once.
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    const fullKeys = keys.map((key) => this.#key(key));
    const kv = this.#kv;
    let entries: DenoKvEntry[];
    if (typeof kv.getMany !== "function") {
      entries = await Promise.all(fullKeys.map((key) => kv.get(key)));
    } else {
      const chunks: Promise<DenoKvEntry[]>[] = [];
      for (let i = 0; i < fullKeys.length; i += DENO_KV_GET_MANY_LIMIT) {
        chunks.push(kv.getMany(fullKeys.slice(i, i + DENO_KV_GET_MANY_LIMIT)));
      }
      entries = (await Promise.all(chunks)).flat();
    }
    return entries.map((entry) => liveValue(entry) as T | undefined);
  }

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live; forever when absent.
   * @throws {TypeError} When the value cannot be encoded as JSON.
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    const fullKey = this.#key(key);
    const { stored, expireIn } = storedValue(value, options);
    const result = await this.#kv.atomic().set(fullKey, stored, expireIn).commit();
    if (!result.ok) throw new Error(`Deno KV did not commit the write of ${JSON.stringify(key)}.`);
  }

  /**
   * Writes several values with Deno KV atomic operations of up to ten
   * writes each (ten values of Deno KV's largest size fit in one), sent at
   * once.
   * @param entries The writes; a later entry for the same key wins.
   * @throws {TypeError} When a value cannot be encoded as JSON (nothing is
   *                     written then).
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    // One write per key, its last: the chunks commit in no set order.
    const last = new Map<string, { key: string[]; value: ReturnType<typeof storedValue> }>();
    for (const entry of entries) {
      const key = this.#key(entry.key);
      const name = JSON.stringify(key);
      last.delete(name);
      last.set(name, { key, value: storedValue(entry.value, entry.options ?? {}) });
    }
    const writes = [...last.values()];
    const commits: Promise<{ readonly ok: boolean }>[] = [];
    for (let i = 0; i < writes.length; i += DENO_KV_SET_MANY_CHUNK) {
      const atomic = this.#kv.atomic();
      for (const { key, value } of writes.slice(i, i + DENO_KV_SET_MANY_CHUNK)) {
        atomic.set(key, value.stored, value.expireIn);
      }
      commits.push(atomic.commit());
    }
    for (const result of await Promise.all(commits)) {
      if (!result.ok) throw new Error("Deno KV did not commit a write of setMany().");
    }
  }

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async delete(key: KvKey): Promise<void> {
    await this.#kv.atomic().delete(this.#key(key)).commit();
  }

  /**
   * Lists the unexpired entries whose key starts with `prefix`, element by
   * element (the prefix itself included), in Deno KV's key order.
   * @param prefix The key prefix; every entry when absent.
   * @returns The entries.
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const fullPrefix = prefix === undefined ? this.#key([] as unknown as KvKey) : this.#key(prefix);
    const strip = this.#prefix.length;
    // Deno KV's prefix selector leaves out the key equal to the prefix.
    if (prefix !== undefined) {
      const exact = liveValue(await this.#kv.get(fullPrefix));
      if (exact !== undefined) yield { key: [...prefix] as unknown as KvKey, value: exact };
    }
    for await (const entry of this.#kv.list({ prefix: fullPrefix })) {
      const value = liveValue(entry);
      if (value === undefined) continue;
      yield { key: entry.key.slice(strip) as unknown as KvKey, value };
    }
  }

  /**
   * Atomically replaces the value at `key` with `newValue` if the current
   * (unexpired) value deeply equals `expectedValue`; `undefined` means
   * absent.  The write is an atomic operation checked against the version
   * that was compared, so a concurrent write makes it compare again.
   * @param key The key.
   * @param expectedValue The value expected to be there now.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   * @throws {TypeError} When `newValue` cannot be encoded as JSON.
   * @throws {DenoKvClosedError} When the store was closed.
   * @since 0.3.0
   */
  async cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options: KvStoreSetOptions = {},
  ): Promise<boolean> {
    const fullKey = this.#key(key);
    const { stored, expireIn } = storedValue(newValue, options);
    // Normalize through JSON so that the comparison sees what get() would.
    const expected = expectedValue === undefined
      ? undefined
      : JSON.parse(encodeJson(expectedValue, "expectedValue"));
    while (true) {
      const entry = await this.#kv.get(fullKey);
      const current = liveValue(entry);
      const matches = current === undefined
        ? expected === undefined
        : expected !== undefined && jsonValuesEqual(current, expected);
      if (!matches) return false;
      const result = await this.#kv.atomic()
        .check({ key: fullKey, versionstamp: entry.versionstamp })
        .set(fullKey, stored, expireIn)
        .commit();
      if (result.ok) return true;
      // Someone wrote in between: compare with what is there now.
    }
  }

  /**
   * Marks the store closed; later calls reject.  The Deno KV database
   * stays open: it belongs to the caller.
   * @since 0.3.0
   */
  [Symbol.asyncDispose](): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }
}

function encodeJson(value: unknown, what: string): string {
  const text = JSON.stringify(value);
  if (text === undefined) {
    throw new TypeError(`The ${what} must be JSON-compatible; got ${typeof value}.`);
  }
  return text;
}

function storedValue(
  value: unknown,
  options: KvStoreSetOptions,
): { stored: StoredValue; expireIn: { expireIn?: number } } {
  const json = encodeJson(value, "value");
  if (options.ttl === undefined) return { stored: { json, expires: null }, expireIn: {} };
  const ttlMs = durationToMilliseconds(options.ttl, "ttl");
  return {
    stored: { json, expires: Date.now() + ttlMs },
    // Deno KV deletes the entry some time after this; reads check `expires`.
    expireIn: { expireIn: Math.max(1, Math.ceil(ttlMs)) },
  };
}

/** The value of an entry this store wrote, or `undefined` when absent or expired. */
function liveValue(entry: DenoKvEntry): unknown {
  if (entry.versionstamp === null) return undefined;
  const stored = entry.value as Partial<StoredValue> | null;
  if (stored == null || typeof stored.json !== "string") return undefined;
  if (stored.expires != null && stored.expires <= Date.now()) return undefined;
  return JSON.parse(stored.json);
}
