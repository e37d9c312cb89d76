// The backend of testBatchHandlers() in ../batch-handlers.test.ts: a
// process's own connection to the broker (8 handlers at once), on the
// namespace's queues.  AMQP holds no key–value store: each process keeps
// its own in memory.  There is no lease: the broker hands a killed
// worker's messages out again as soon as its connection is gone.
import { MemoryKvStore } from "@fedwork/core";
import type { BatchHandlerBackend } from "@fedwork/testing";
import { AmqpMessageQueue } from "../message-queue.ts";
import { AMQP_URL } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue on the namespace. */
export function open(
  namespace: string,
  options: { readonly concurrency?: number } = {},
): BatchHandlerBackend {
  return {
    queue: new AmqpMessageQueue({
      url: AMQP_URL,
      queue: namespace,
      concurrency: options.concurrency ?? 8,
      redeliveryDelay: { milliseconds: 100 },
    }),
    kv: new MemoryKvStore(),
  };
}
