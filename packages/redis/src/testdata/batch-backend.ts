// The backend of testBatchHandlers() in ../batch-handlers.test.ts: a
// process's queue (8 handlers at once, a short lease for the crash test)
// and store, on the namespace.
import type { BatchHandlerBackend } from "@fedwork/testing";
import { REDIS_URL } from "./conformance-factory.ts";
import { RedisKvStore } from "../kv-store.ts";
import { RedisMessageQueue } from "../message-queue.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace. */
export function open(
  namespace: string,
  options: { readonly concurrency?: number } = {},
): BatchHandlerBackend {
  return {
    queue: new RedisMessageQueue({
      url: REDIS_URL,
      queue: namespace,
      concurrency: options.concurrency ?? 8,
      leaseTime: { seconds: 2 },
    }),
    kv: new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  };
}
