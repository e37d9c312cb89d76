// The backend of testPauseAndResume() in ../pause.test.ts: a process's own
// queue, store and pub/sub connections on the namespace.
import type { PauseBackend } from "@fedwork/testing";
import { REDIS_URL } from "./conformance-factory.ts";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";
import { RedisPubSub } from "../pubsub.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's connections on the namespace. */
export function open(namespace: string): PauseBackend {
  return {
    queue: new RedisMessageQueue({ url: REDIS_URL, queue: namespace }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
    pubsub: new RedisPubSub({ url: REDIS_URL, prefix: namespace }),
  };
}
