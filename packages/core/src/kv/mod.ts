export type { KvKey, KvStore, KvStoreListEntry, KvStoreSetOptions } from "./kv-store.ts";
