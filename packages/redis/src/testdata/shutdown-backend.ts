// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own queue, store and pub/sub clients, on the namespace.
import type { ShutdownBackend } from "@fedwork/testing";
import { deleteKeys, REDIS_URL } from "./conformance-factory.ts";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";
import { RedisPubSub } from "../pubsub.ts";
import { redisBackendPrefixes } from "./progress-backend.ts";

// Leases (and hand-back delays) far longer than the test: the task the
// first worker's shutdown cuts short can only reach the second worker in
// time if the first one released it.
const LEASE = { minutes: 10 } as const;

/** Opens a process's clients on the namespace. */
export function open(namespace: string): ShutdownBackend {
  return {
    queue: new RedisMessageQueue({ url: REDIS_URL, queue: namespace, leaseTime: LEASE }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
    pubsub: new RedisPubSub({ url: REDIS_URL, prefix: namespace }),
  };
}

/** Deletes the namespace's keys. */
export async function cleanup(namespace: string): Promise<void> {
  for (const prefix of redisBackendPrefixes(namespace)) await deleteKeys(prefix);
}
