/**
 * `@fedwork/postgres`: a durable {@link PostgresMessageQueue} and a
 * {@link PostgresKvStore} for Fedwork, on the `postgres` (postgres.js)
 * client.
 *
 * @example
 * ```ts
 * import { PostgresKvStore, PostgresMessageQueue } from "@fedwork/postgres";
 *
 * const queue = new PostgresMessageQueue("postgres://localhost/app");
 * const kv = new PostgresKvStore("postgres://localhost/app");
 * ```
 * @module
 * @since 0.1.0
 */
export { PostgresClosedError } from "./errors.ts";
export { PostgresMessageQueue } from "./message-queue.ts";
export type { PostgresMessageQueueOptions } from "./options.ts";
export { PostgresKvStore, type PostgresKvStoreOptions } from "./kv-store.ts";
export { PostgresPubSub, type PostgresPubSubOptions } from "./pubsub.ts";
