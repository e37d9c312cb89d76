// The backend of testDurableSteps() in ../steps.test.ts: a process's own
// queue (with a short lease, so that a killed worker's message comes back
// soon) and store connections on the namespace.
import type { DurableStepsBackend } from "@fedwork/testing";
import { REDIS_URL } from "./conformance-factory.ts";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's connections on the namespace. */
export function open(namespace: string): DurableStepsBackend {
  return {
    queue: new RedisMessageQueue({ url: REDIS_URL, queue: namespace, leaseTime: { seconds: 3 } }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  };
}
