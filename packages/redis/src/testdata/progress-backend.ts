// One stand-in process of testTaskProgressAndRouting() on Redis: its own
// queue, store and pub/sub clients, on a single server or on the cluster.
import type { ProgressRoutingBackend } from "@fedwork/testing";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";
import type { RedisConnectionOptions } from "../connection.ts";
import { RedisPubSub } from "../pubsub.ts";

/**
 * Opens a process's clients on `namespace`.
 * @param connection `{ url }` or `{ createClient }`, as every Redis class takes.
 * @param namespace The test's namespace.
 * @returns The backend.
 */
export function openRedisBackend(
  connection: RedisConnectionOptions,
  namespace: string,
): ProgressRoutingBackend {
  const queue = new RedisMessageQueue({ ...connection, queue: namespace });
  const kv = new RedisKvStore({ ...connection, prefix: namespace });
  const pubsub = new RedisPubSub({ ...connection, prefix: namespace });
  return {
    queue,
    kv,
    pubsub,
    async dispose() {
      await queue[Symbol.asyncDispose]();
      await kv[Symbol.asyncDispose]();
      await pubsub[Symbol.asyncDispose]();
    },
  };
}

/**
 * The key prefixes one namespace's queue, store and pub/sub write under.
 * @param namespace The test's namespace.
 * @returns The prefixes.
 */
export function redisBackendPrefixes(namespace: string): string[] {
  return [`{fedwork:${namespace}`, `${namespace}:`];
}
