// The backend of testBatchHandlers() in ../in-process.test.ts: an in-memory
// queue that runs 8 handlers at once, and an in-memory store.
import { InProcessMessageQueue, MemoryKvStore, ParallelMessageQueue } from "@fedwork/core";
import type { BatchHandlerBackend } from "../batch-handler-app.ts";

/** Opens a process's engines; the namespace is not needed in memory. */
export function open(_namespace: string): BatchHandlerBackend {
  return {
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), 8),
    kv: new MemoryKvStore(),
  };
}
