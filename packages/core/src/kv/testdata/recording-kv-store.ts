// For tests: a MemoryKvStore that records which keys it was asked to read
// or write, so that a test can prove what a feature does not touch.  To the
// code under test it is not a `MemoryKvStore` (a subclass is not detected
// as one), so it is read and written as a networked store would be.
import type { KvKey, KvStoreSetManyEntry, KvStoreSetOptions } from "../kv-store.ts";
import { MemoryKvStore } from "../memory-kv-store.ts";

/** What a {@link RecordingKvStore} was asked to do with a key. */
export type RecordedKvOperation = "read" | "write" | "delete";

/** A store that records its operations, each key as `a/b/c`. */
export class RecordingKvStore extends MemoryKvStore {
  /** Every key read, in order (a `getMany()` adds each of its keys). */
  readonly reads: string[] = [];
  /** Every operation, in order. */
  readonly operations: { readonly op: RecordedKvOperation; readonly key: string }[] = [];

  /** The keys read, written or deleted that start with `prefix`. */
  touched(prefix = ""): string[] {
    return this.operations.map(({ key }) => key).filter((key) => key.startsWith(prefix));
  }

  #record(op: RecordedKvOperation, key: KvKey): void {
    const joined = key.join("/");
    if (op === "read") this.reads.push(joined);
    this.operations.push({ op, key: joined });
  }

  override get<T = unknown>(key: KvKey): Promise<T | undefined> {
    this.#record("read", key);
    return super.get<T>(key);
  }

  override getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    for (const key of keys) this.#record("read", key);
    return super.getMany<T>(keys);
  }

  override set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    this.#record("write", key);
    return super.set(key, value, options);
  }

  override setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    for (const entry of entries) this.#record("write", entry.key);
    return super.setMany(entries);
  }

  override delete(key: KvKey): Promise<void> {
    this.#record("delete", key);
    return super.delete(key);
  }
}
