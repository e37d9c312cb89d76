import {
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetManyEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import type { WorkersKvNamespace } from "./bindings.ts";

/**
 * Options for {@link WorkersKvStore}.
 * @since 0.3.0
 */
export interface WorkersKvStoreOptions {
  /**
   * A string put in front of every Workers KV key the store writes, so that
   * several stores (or other data) can share one namespace.  Empty by
   * default, which keeps the keys `@fedify/cfworkers` writes: a Fedify
   * application that switches keeps its cached documents.
   */
  readonly prefix?: string;
}

/** The metadata stored beside each value (the same as Fedify's). */
interface StoredMetadata {
  /** When the entry expires (milliseconds since the epoch). */
  readonly expires?: number;
}

/** Workers KV refuses keys longer than this many bytes. */
const MAX_KEY_BYTES = 512;

/** Workers KV refuses an `expirationTtl` below this many seconds. */
const MIN_EXPIRATION_TTL_SECONDS = 60;

const WHERE = "new WorkersKvStore()";
const encoder = new TextEncoder();

/**
 * A {@link KvStore} on a Cloudflare Workers KV namespace binding.  Keys are
 * stored as their JSON text (after the optional prefix), values as JSON
 * text, and a TTL both as Workers KV's `expirationTtl` and as an expiry
 * time in the key's metadata.
 *
 * What Workers KV cannot do shapes what the store offers:
 *
 * - **No `cas()`.**  Workers KV has no conditional write, so the store
 *   leaves the optional method out rather than offer a compare-and-swap
 *   that two Workers could both win.  What in Fedwork needs `cas()`
 *   (task deduplication through the store, schedules, batches' completion
 *   tasks, webhook and host-health bookkeeping) refuses or degrades as it
 *   does on any store without it.  {@link D1KvStore} has an atomic one.
 * - **TTLs under a minute.**  Workers KV's shortest `expirationTtl` is 60
 *   seconds.  A shorter TTL is written as 60 seconds, and the expiry time in
 *   the metadata makes `get()` and `list()` treat the entry as absent once
 *   the real TTL has passed; Workers KV deletes it at the minute.
 * - **Eventual consistency.**  A write is visible at once in the location
 *   that made it and within about a minute elsewhere; `list()` may lag
 *   behind writes and deletes in the same way.
 * - **Key length.**  A key's JSON text (with the prefix) must fit in 512
 *   bytes.
 *
 * @example
 * ```ts ignore
 * import { WorkersKvStore } from "@fedwork/cfworkers";
 *
 * export default {
 *   async fetch(request: Request, env: { KV: KVNamespace }) {
 *     const kv = new WorkersKvStore(env.KV);
 *     await kv.set(["greeting"], "hello", { ttl: { minutes: 5 } });
 *     return new Response(String(await kv.get(["greeting"])));
 *   },
 * };
 * ```
 * @since 0.3.0
 */
export class WorkersKvStore implements KvStore {
  readonly #namespace: WorkersKvNamespace;
  readonly #prefix: string;

  /**
   * Creates a store on a Workers KV namespace binding.
   * @param namespace The binding, e.g. `env.KV`.
   * @param options The key prefix.
   * @throws {TypeError} When the binding is missing or an option is unknown
   *                     or of the wrong type.
   * @since 0.3.0
   */
  constructor(namespace: WorkersKvNamespace, options: WorkersKvStoreOptions = {}) {
    if (
      namespace == null || typeof namespace.getWithMetadata !== "function" ||
      typeof namespace.put !== "function" || typeof namespace.list !== "function"
    ) {
      throw new TypeError(
        `${WHERE} needs a Workers KV namespace binding (e.g. env.KV); got ${typeof namespace}.`,
      );
    }
    if (options == null || typeof options !== "object") {
      throw new TypeError(`${WHERE}'s second argument must be an options object.`);
    }
    assertKnownOptions(options, ["prefix"], { where: WHERE });
    if (options.prefix !== undefined && typeof options.prefix !== "string") {
      throw new TypeError(`${WHERE}'s prefix option must be a string.`);
    }
    this.#namespace = namespace;
    this.#prefix = options.prefix ?? "";
  }

  #encodeKey(key: KvKey): string {
    const encoded = this.#prefix + JSON.stringify(key);
    if (encoder.encode(encoded).byteLength > MAX_KEY_BYTES) {
      throw new RangeError(
        `The key ${JSON.stringify(key)} is too long for Workers KV: with the prefix its JSON ` +
          `text must fit in ${MAX_KEY_BYTES} bytes.`,
      );
    }
    return encoded;
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   * @throws {RangeError} When the encoded key is longer than 512 bytes.
   * @since 0.3.0
   */
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    return await this.#read(this.#encodeKey(key)) as T | undefined;
  }

  /**
   * Reads several values, one Workers KV read per key, all sent at once
   * (a Worker's reads of one namespace run concurrently).
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @throws {RangeError} When an encoded key is longer than 512 bytes.
   * @since 0.3.0
   */
  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    const names = keys.map((key) => this.#encodeKey(key));
    return await Promise.all(names.map((name) => this.#read(name))) as (T | undefined)[];
  }

  async #read(name: string): Promise<unknown> {
    const { value, metadata } = await this.#namespace.getWithMetadata(name, "text");
    if (value == null || isExpired(metadata)) return undefined;
    return JSON.parse(value);
  }

  /**
   * Writes a value.  A TTL under 60 seconds is kept by the store (reads
   * stop returning the entry when it passes) while Workers KV deletes the
   * entry after 60 seconds, its shortest TTL.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live; forever when absent.
   * @throws {TypeError} When the value cannot be encoded as JSON.
   * @throws {RangeError} When the encoded key is longer than 512 bytes or
   *                      the TTL is negative.
   * @since 0.3.0
   */
  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    const name = this.#encodeKey(key);
    const text = JSON.stringify(value);
    if (text === undefined) {
      throw new TypeError(`The value must be JSON-compatible; got ${typeof value}.`);
    }
    if (options.ttl === undefined) {
      await this.#namespace.put(name, text, { metadata: {} satisfies StoredMetadata });
      return;
    }
    const ttlMs = durationToMilliseconds(options.ttl, "ttl");
    const metadata: StoredMetadata = { expires: Date.now() + ttlMs };
    await this.#namespace.put(name, text, {
      expirationTtl: Math.max(MIN_EXPIRATION_TTL_SECONDS, Math.ceil(ttlMs / 1000)),
      metadata,
    });
  }

  /**
   * Writes several values, one Workers KV write per key, all sent at once.
   * @param entries The writes; a later entry for the same key wins.
   * @throws {TypeError} When a value cannot be encoded as JSON.
   * @throws {RangeError} When an encoded key is longer than 512 bytes or a
   *                      TTL is negative.
   * @since 0.3.0
   */
  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    // Writes to one key sent at once may land in any order: keep the last.
    const last = new Map<string, KvStoreSetManyEntry>();
    for (const entry of entries) {
      const name = this.#encodeKey(entry.key);
      last.delete(name);
      last.set(name, entry);
    }
    await Promise.all(
      [...last.values()].map((entry) => this.set(entry.key, entry.value, entry.options)),
    );
  }

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   * @throws {RangeError} When the encoded key is longer than 512 bytes.
   * @since 0.3.0
   */
  async delete(key: KvKey): Promise<void> {
    await this.#namespace.delete(this.#encodeKey(key));
  }

  /**
   * Lists the unexpired entries whose key starts with `prefix`, element by
   * element (the prefix itself included), following Workers KV's list
   * cursor page by page.  Each entry costs one read besides the listing.
   * @param prefix The key prefix; every entry of the store when absent.
   * @returns The entries, in Workers KV's order (by encoded key).
   * @since 0.3.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    let pattern: string;
    if (prefix === undefined || prefix.length === 0) {
      pattern = `${this.#prefix}[`;
    } else {
      const exactName = this.#encodeKey(prefix);
      const exact = await this.#read(exactName);
      if (exact !== undefined) yield { key: [...prefix] as unknown as KvKey, value: exact };
      // `["a","b"]` minus its closing bracket plus a comma starts exactly
      // the keys that have ["a","b"] as an element-wise prefix.
      pattern = `${exactName.slice(0, -1)},`;
    }
    let cursor: string | undefined;
    do {
      const page = await this.#namespace.list({ prefix: pattern, ...(cursor ? { cursor } : {}) });
      for (const listed of page.keys) {
        if (isExpired(listed.metadata)) continue;
        const value = await this.#read(listed.name);
        // Deleted or expired since it was listed.
        if (value === undefined) continue;
        yield {
          key: JSON.parse(listed.name.slice(this.#prefix.length)) as KvKey,
          value,
        };
      }
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
  }
}

function isExpired(metadata: unknown): boolean {
  const expires = (metadata as StoredMetadata | null | undefined)?.expires;
  return typeof expires === "number" && expires <= Date.now();
}
