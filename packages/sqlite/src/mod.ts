/**
 * `@fedwork/sqlite`: a durable message queue, a key–value store and a
 * pub/sub transport in a SQLite file, on the runtime's built-in SQLite
 * (`node:sqlite` on Node.js and Deno, `bun:sqlite` on Bun).
 *
 * @example
 * ```ts
 * import { SqliteKvStore, SqliteMessageQueue, SqlitePubSub } from "@fedwork/sqlite";
 *
 * const queue = new SqliteMessageQueue({ path: "fedwork.sqlite" });
 * const kv = new SqliteKvStore({ path: "fedwork.sqlite" });
 * const pubsub = new SqlitePubSub({ path: "fedwork.sqlite" });
 * ```
 * @module
 * @since 0.1.0
 */
export { SqliteMessageQueue } from "./message-queue.ts";
export type { SqliteMessageQueueOptions, SqlitePubSubOptions } from "./options.ts";
export { SqlitePubSub } from "./pubsub.ts";
export { SqliteKvStore, type SqliteKvStoreOptions } from "./kv-store.ts";
export { SqliteClosedError, SqliteIdentifierError } from "./errors.ts";
export type { SqliteOpenDatabase } from "./constructor-arguments.ts";
