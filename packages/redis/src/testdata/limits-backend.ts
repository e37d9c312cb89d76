// The backend of testTaskLimits() in ../task-limits.test.ts: one
// process's queue, store and pub/sub clients, on the namespace.
import type { ShutdownBackend } from "@fedwork/testing";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";
import { RedisPubSub } from "../pubsub.ts";
import { REDIS_URL } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace. */
export function open(namespace: string): ShutdownBackend {
  return {
    // A lease long enough for a loaded machine: nothing is killed here.
    queue: new RedisMessageQueue({ url: REDIS_URL, queue: namespace, leaseTime: { seconds: 30 } }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
    pubsub: new RedisPubSub({ url: REDIS_URL, prefix: namespace }),
  };
}
