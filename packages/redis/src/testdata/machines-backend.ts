// The backend of testWorkerMachines() in ../machines.test.ts: a process's
// own queue, store and pub/sub clients on the namespace; the queue runs
// one message at a time and prefetches none, so that a held task leaves
// the next one to the other worker process.
import type { ShutdownBackend } from "@fedwork/testing";
import { REDIS_URL } from "./conformance-factory.ts";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";
import { RedisPubSub } from "../pubsub.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace. */
export function open(namespace: string): ShutdownBackend {
  return {
    queue: new RedisMessageQueue({ url: REDIS_URL, queue: namespace, concurrency: 1, prefetch: 0 }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
    pubsub: new RedisPubSub({ url: REDIS_URL, prefix: namespace }),
  };
}
