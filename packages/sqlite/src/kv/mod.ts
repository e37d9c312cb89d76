export { SqliteKvStore, type SqliteKvStoreOptions } from "./sqlite-kv-store.ts";
