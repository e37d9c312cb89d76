export type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "./kv-store.ts";
export { MemoryKvStore } from "./memory-kv-store.ts";
