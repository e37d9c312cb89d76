export type {
  KvKey,
  KvStore,
  KvStoreListEntry,
  KvStoreSetManyEntry,
  KvStoreSetOptions,
} from "./kv-store.ts";
export { MemoryKvStore } from "./memory-kv-store.ts";
