/**
 * `@fedwork/redis`: a durable {@link RedisMessageQueue} and a
 * {@link RedisKvStore} for Fedwork on Redis, through ioredis.
 *
 * @example
 * ```ts ignore
 * import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";
 *
 * const queue = new RedisMessageQueue({ url: "redis://127.0.0.1:6379" });
 * const kv = new RedisKvStore({ url: "redis://127.0.0.1:6379" });
 * ```
 * @module
 * @since 0.1.0
 */
export type { RedisClient, RedisConnectionOptions } from "./connection.ts";
export type { RedisMessageQueueOptions } from "./options.ts";
export { RedisMessageQueue } from "./message-queue.ts";
export { RedisLeaseLostError, RedisMessageQueueClosedError } from "./errors.ts";
export { RedisKvStore, type RedisKvStoreOptions } from "./kv-store.ts";
export { RedisPubSub, type RedisPubSubOptions } from "./pubsub.ts";
