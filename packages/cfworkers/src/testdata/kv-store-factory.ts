// The conformance factories for WorkersKvStore and D1KvStore: each store is
// a client of the test Worker, which runs every call on the real store over
// Miniflare's Workers KV or D1, so the suites check the stores as they run
// inside workerd.
import {
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetManyEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import { sharedWorker, type TestWorker } from "./miniflare.ts";

/** A KvStore whose calls run in the test Worker. */
class WorkerKvStoreClient implements KvStore, AsyncDisposable {
  readonly #worker: TestWorker;
  readonly #store: "kv" | "d1";
  readonly #prefix: string;

  constructor(worker: TestWorker, store: "kv" | "d1", prefix: string) {
    this.#worker = worker;
    this.#store = store;
    this.#prefix = prefix;
  }

  #call<T>(call: Record<string, unknown>): Promise<T> {
    return this.#worker.post<T>("/kv", { store: this.#store, prefix: this.#prefix, ...call });
  }

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    return (await this.#call<{ value?: T }>({ op: "get", key })).value;
  }

  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    const { found } = await this.#call<{ found: T[][] }>({ op: "getMany", keys });
    return found.map((value) => value[0]);
  }

  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    await this.#call({
      op: "set",
      key,
      value,
      ...(options.ttl === undefined ? {} : { ttlMs: durationToMilliseconds(options.ttl, "ttl") }),
    });
  }

  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    await this.#call({
      op: "setMany",
      entries: entries.map(({ key, value, options }) => ({
        key,
        value,
        ...(options?.ttl === undefined
          ? {}
          : { ttlMs: durationToMilliseconds(options.ttl, "ttl") }),
      })),
    });
  }

  async delete(key: KvKey): Promise<void> {
    await this.#call({ op: "delete", key });
  }

  async cas(
    key: KvKey,
    expected: unknown,
    value: unknown,
    options: KvStoreSetOptions = {},
  ): Promise<boolean> {
    if (this.#store !== "d1") throw new TypeError("WorkersKvStore has no cas().");
    return (await this.#call<{ swapped: boolean }>({
      op: "cas",
      key,
      expected,
      value,
      ...(options.ttl === undefined ? {} : { ttlMs: durationToMilliseconds(options.ttl, "ttl") }),
    })).swapped;
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const { entries } = await this.#call<{ entries: KvStoreListEntry[] }>({
      op: "list",
      ...(prefix === undefined ? {} : { key: prefix }),
    });
    yield* entries;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#worker.post("/cleanup", { store: this.#store, prefix: this.#prefix });
    await this.#worker[Symbol.asyncDispose]();
  }
}

/** A WorkersKvStore on a fresh test Worker, its keys under the namespace. */
export async function createStore(namespace: string): Promise<KvStore> {
  const client = new WorkerKvStoreClient(await sharedWorker(), "kv", `${namespace}/`);
  // The suite checks cas() when the store has one; WorkersKvStore has none.
  return {
    get: (key) => client.get(key),
    set: (key, value, options) => client.set(key, value, options),
    delete: (key) => client.delete(key),
    list: (prefix) => client.list(prefix),
    [Symbol.asyncDispose]: () => client[Symbol.asyncDispose](),
  } as KvStore & AsyncDisposable;
}

/** A D1KvStore on a fresh test Worker, in a table named after the namespace. */
export async function createD1Store(namespace: string): Promise<KvStore> {
  return new WorkerKvStoreClient(await sharedWorker(), "d1", namespace.replace(/\W/g, "_"));
}
