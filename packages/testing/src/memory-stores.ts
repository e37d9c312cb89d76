// One MemoryKvStore per test namespace, so that the suites' "another
// connection to the same store" reaches the same data in memory.
// Internal to @fedwork/testing's own tests.
import { MemoryKvStore } from "@fedwork/core";
import type { StoreSuiteOptions } from "./store-suite.ts";

/**
 * The options of a store suite for {@link MemoryKvStore}: each namespace's
 * store is opened as often as a test likes, and dropped by `cleanup()`.
 * @returns The options.
 */
export function memoryStoreOptions(): StoreSuiteOptions {
  const stores = new Map<string, MemoryKvStore>();
  return {
    name: "MemoryKvStore",
    open(namespace) {
      let kv = stores.get(namespace);
      if (kv == null) stores.set(namespace, kv = new MemoryKvStore());
      return kv;
    },
    cleanup(namespace) {
      stores.delete(namespace);
      return Promise.resolve();
    },
  };
}
