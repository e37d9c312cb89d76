import type {
  KvKey,
  KvStore,
  KvStoreListEntry,
  KvStoreSetManyEntry,
  KvStoreSetOptions,
} from "@fedwork/core";
import { durationToMilliseconds } from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import type { Cluster, Redis } from "ioredis";
import {
  type RedisClient,
  type RedisConnectionOptions,
  RedisConnectionSource,
} from "./connection.ts";
import { FEDIFY_REDIS_HINTS, resolveConstructorArguments } from "./constructor-arguments.ts";
import { decodeKvKey, encodeKvKey, encodeKvValue, escapeGlob } from "./kv-codec.ts";
import { checkPrefix } from "./options.ts";
import { LuaScript } from "./scripts/lua-script.ts";
import { kvCasLua } from "./scripts/kv-cas.lua.ts";

/**
 * Options for {@link RedisKvStore}.  Besides these, exactly one way to
 * connect is required (see {@link RedisConnectionOptions}).
 * @since 0.1.0
 */
export interface RedisKvStoreOptions extends RedisConnectionOptions {
  /**
   * The first part of every key the store writes: a key `["a", "b"]` is
   * stored as `<prefix>:kv:["a","b"]`.  `"fedwork"` by default.
   */
  readonly prefix?: string;
}

const casScript = new LuaScript(kvCasLua);

/**
 * The connections whose keys `list()` scans: the client itself, or every
 * master of a Redis Cluster (once the cluster client knows them).
 */
async function scannedNodes(redis: RedisClient): Promise<Redis[]> {
  if (!redis.isCluster) return [redis as Redis];
  const cluster = redis as Cluster;
  // A cluster client learns its nodes on connecting; a command waits for it.
  if (cluster.status !== "ready") await cluster.ping();
  return cluster.nodes("master");
}

/**
 * The values of `keys`, found by SCAN on `node`.  MGET needs its keys in
 * one slot on a cluster, so there they are read one by one in a pipeline to
 * the node that holds them; a key whose slot moved meanwhile is read again
 * through the cluster client, which follows the move.
 */
async function getValues(
  redis: RedisClient,
  node: Redis,
  keys: string[],
): Promise<(string | null)[]> {
  if (!redis.isCluster) return await redis.mget(...keys);
  const pipeline = node.pipeline();
  for (const key of keys) pipeline.get(key);
  const replies = (await pipeline.exec()) ?? [];
  return await Promise.all(keys.map((key, index) => {
    const [error, text] = replies[index] ?? [new Error("no reply")];
    return error == null ? text as string | null : redis.get(key);
  }));
}

// Keys fetched per SCAN page in list().
const SCAN_COUNT = 500;

/**
 * A {@link KvStore} on Redis, through ioredis.  Values are stored as JSON
 * text (with object keys sorted, so deep-equal values have equal text),
 * TTLs as Redis key expiry, and `cas()` is one Lua script, so it is atomic.
 *
 * `list()` walks the keys with `SCAN`; on Redis Cluster it scans every
 * master in turn (the keys of one store are spread over all of them).
 *
 * @example
 * ```ts ignore
 * import { RedisKvStore } from "@fedwork/redis";
 *
 * await using kv = new RedisKvStore({ url: "redis://127.0.0.1:6379" });
 * await kv.set(["greeting", "en"], "hello", { ttl: { minutes: 5 } });
 * console.log(await kv.get(["greeting", "en"]));
 * ```
 * @since 0.1.0
 */
export class RedisKvStore implements KvStore, AsyncDisposable {
  readonly #prefix: string;
  readonly #connections: RedisConnectionSource;

  /**
   * Creates a store; the connection opens lazily on first use.
   * @param options How to connect and the key prefix.
   * @throws {TypeError} When not exactly one way to connect is given or
   *                     `prefix` is not a non-empty string.
   * @since 0.1.0
   */
  constructor(options: RedisKvStoreOptions);
  /**
   * Creates a store on an ioredis client, as `@fedify/redis`'s
   * `new RedisKvStore(redis, options?)` does: the client becomes the
   * `client` option (left open when the store is disposed), a function
   * the `createClient` option.  Fedify's `keyPrefix` and `codec` options
   * are refused with what to use instead.
   * @param client An ioredis `Redis` or `Cluster` client, or a function
   *               returning a new one.
   * @param options The key prefix.
   * @throws {TypeError} When the first argument is neither, an option is
   *                     unknown, or `prefix` is not a non-empty string.
   * @since 0.4.0
   */
  constructor(
    client: RedisClient | (() => RedisClient),
    options?: Omit<RedisKvStoreOptions, keyof RedisConnectionOptions>,
  );
  constructor(
    first: RedisKvStoreOptions | RedisClient | (() => RedisClient),
    second?: Omit<RedisKvStoreOptions, keyof RedisConnectionOptions>,
  ) {
    const options = resolveConstructorArguments<RedisKvStoreOptions>(
      first,
      second,
      "new RedisKvStore()",
      "new RedisKvStore(redis)",
    );
    assertKnownOptions(options, ["client", "createClient", "url", "redisOptions", "prefix"], {
      where: "new RedisKvStore()",
      hints: FEDIFY_REDIS_HINTS,
    });
    this.#prefix = `${checkPrefix(options.prefix, "new RedisKvStore()")}:kv:`;
    this.#connections = new RedisConnectionSource(options, "RedisKvStore");
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   * @since 0.1.0
   */
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const text = await this.#connections.main.get(this.#key(key));
    return text == null ? undefined : JSON.parse(text) as T;
  }

  /**
   * Reads several values in one round trip: one `MGET`, or on Redis
   * Cluster (where one `MGET` must keep to one hash slot) a `GET` per key,
   * all sent at once.
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @since 0.3.0
   */
  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    const names = keys.map((key) => this.#key(key));
    const redis = this.#connections.main;
    // The cluster client sends each GET to the node of its slot; sent in
    // the same tick, they travel as pipelines, one per node.
    const texts = redis.isCluster
      ? await Promise.all(names.map((name) => redis.get(name)))
      : await redis.mget(...names);
    return texts.map((text) => text == null ? undefined : JSON.parse(text) as T);
  }

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live.
   * @throws {TypeError} When the value is not JSON-serializable or `ttl`
   *                     is not a duration.
   * @throws {RangeError} When `ttl` is negative.
   * @since 0.1.0
   */
  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    const text = encodeKvValue(value);
    const ttlMs = this.#ttl(options);
    const redis = this.#connections.main;
    if (ttlMs > 0) await redis.set(this.#key(key), text, "PX", ttlMs);
    else await redis.set(this.#key(key), text);
  }

  /**
   * Writes several values in one round trip: one pipeline of `SET`s, or on
   * Redis Cluster (where a pipeline must keep to one node) a `SET` per
   * entry, all sent at once.
   * @param entries The writes; a later entry for the same key wins.
   * @throws {TypeError} When a value is not JSON-serializable or a `ttl`
   *                     is not a duration (nothing is written then).
   * @throws {RangeError} When a `ttl` is negative (nothing is written).
   * @since 0.3.0
   */
  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const writes = entries.map((entry) => ({
      name: this.#key(entry.key),
      text: encodeKvValue(entry.value),
      ttlMs: this.#ttl(entry.options ?? {}),
    }));
    const redis = this.#connections.main;
    if (redis.isCluster) {
      // Sent in order on each node's connection, so a repeated key (one
      // slot, one node) ends with its last value.
      await Promise.all(
        writes.map(({ name, text, ttlMs }) =>
          ttlMs > 0 ? redis.set(name, text, "PX", ttlMs) : redis.set(name, text)
        ),
      );
      return;
    }
    const pipeline = redis.pipeline();
    for (const { name, text, ttlMs } of writes) {
      if (ttlMs > 0) pipeline.set(name, text, "PX", ttlMs);
      else pipeline.set(name, text);
    }
    const replies = await pipeline.exec();
    for (const [error] of replies ?? []) if (error != null) throw error;
  }

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   * @since 0.1.0
   */
  async delete(key: KvKey): Promise<void> {
    await this.#connections.main.del(this.#key(key));
  }

  /**
   * Lists the entries whose key starts with `prefix`, in no particular
   * order.  Entries written while listing may or may not be seen.
   * @param prefix The key prefix; every entry when omitted.
   * @since 0.1.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const redis = this.#connections.main;
    const patterns: string[] = [];
    if (prefix == null) {
      patterns.push(`${escapeGlob(this.#prefix)}*`);
    } else {
      const exact = this.#key(prefix);
      const text = await redis.get(exact);
      if (text != null) yield { key: prefix, value: JSON.parse(text) };
      // `["a","b"]` without its closing bracket, plus a comma: the
      // children of ["a", "b"] and nothing else.
      patterns.push(`${escapeGlob(exact.slice(0, -1))},*`);
    }
    for (const pattern of patterns) {
      for (const node of await scannedNodes(redis)) {
        let cursor = "0";
        do {
          const [next, keys] = await node.scan(cursor, "MATCH", pattern, "COUNT", SCAN_COUNT);
          cursor = next;
          if (keys.length === 0) continue;
          const values = await getValues(redis, node, keys);
          for (const [index, name] of keys.entries()) {
            const text = values[index];
            // Expired (or deleted) between SCAN and reading it.
            if (text == null) continue;
            yield { key: decodeKvKey(name.slice(this.#prefix.length)), value: JSON.parse(text) };
          }
        } while (cursor !== "0");
      }
    }
  }

  /**
   * Atomically replaces the value at `key` with `newValue` if the current
   * value deeply equals `expectedValue` (`undefined`: the key is absent).
   * @param key The key.
   * @param expectedValue The value expected there now.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   * @throws {TypeError} When a value is not JSON-serializable.
   * @since 0.1.0
   */
  async cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options: KvStoreSetOptions = {},
  ): Promise<boolean> {
    const expected = expectedValue === undefined ? "" : encodeKvValue(expectedValue);
    const swapped = await casScript.run(this.#connections.main, [this.#key(key)], [
      expected,
      expectedValue === undefined ? "0" : "1",
      encodeKvValue(newValue),
      this.#ttl(options),
    ]);
    return swapped === 1;
  }

  /**
   * Closes the connection this store opened; a `client` passed in stays
   * open.  Data in Redis is kept.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#connections.closeAll();
  }

  #key(key: KvKey): string {
    if (!Array.isArray(key) || key.length === 0) {
      throw new TypeError("A KvStore key must be a non-empty array of strings.");
    }
    return this.#prefix + encodeKvKey(key);
  }

  #ttl(options: KvStoreSetOptions): number {
    return options.ttl == null ? 0 : durationToMilliseconds(options.ttl, "ttl");
  }
}
