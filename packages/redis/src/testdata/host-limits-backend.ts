// The backend of testHostLimits() in ../host-limits.test.ts: one process's
// queue and store clients on the namespace, eight deliveries at once per
// process, so that the host's limit is what binds.
import type { ShutdownBackend } from "@fedwork/testing";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";
import { REDIS_URL } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace. */
export function open(namespace: string): ShutdownBackend {
  return {
    queue: new RedisMessageQueue({ url: REDIS_URL, queue: namespace, concurrency: 8 }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  };
}
