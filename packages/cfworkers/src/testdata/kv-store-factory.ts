// The conformance factory for WorkersKvStore: each store is a client of the
// test Worker, which runs every call on a WorkersKvStore over Miniflare's
// Workers KV, so the suite checks the store as it runs inside workerd.
import {
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import { startWorker, type TestWorker } from "./miniflare.ts";

/** A KvStore whose calls run in the test Worker. */
class WorkerKvStoreClient implements KvStore, AsyncDisposable {
  readonly #worker: TestWorker;
  readonly #prefix: string;

  constructor(worker: TestWorker, prefix: string) {
    this.#worker = worker;
    this.#prefix = prefix;
  }

  #call<T>(call: Record<string, unknown>): Promise<T> {
    return this.#worker.post<T>("/kv", { prefix: this.#prefix, ...call });
  }

  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    return (await this.#call<{ value?: T }>({ op: "get", key })).value;
  }

  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    await this.#call({
      op: "set",
      key,
      value,
      ...(options.ttl === undefined ? {} : { ttlMs: durationToMilliseconds(options.ttl, "ttl") }),
    });
  }

  async delete(key: KvKey): Promise<void> {
    await this.#call({ op: "delete", key });
  }

  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const { entries } = await this.#call<{ entries: KvStoreListEntry[] }>({
      op: "list",
      ...(prefix === undefined ? {} : { key: prefix }),
    });
    yield* entries;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#worker.post("/cleanup", { prefix: this.#prefix });
    await this.#worker[Symbol.asyncDispose]();
  }
}

/** A store on a fresh test Worker, its keys under the namespace. */
export async function createStore(namespace: string): Promise<KvStore> {
  return new WorkerKvStoreClient(await startWorker(), `${namespace}/`);
}
