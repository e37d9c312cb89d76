// The backend of testBatchHandlers() in ../batch-handlers.test.ts: a
// process's queue (8 handlers at once unless told, a short lease for the
// crash test) and store, each with its own handle on the namespace's
// database file.
import type { BatchHandlerBackend } from "@fedwork/testing";
import { createQueue, createStore } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue and store on the namespace's file. */
export async function open(
  namespace: string,
  options: { readonly concurrency?: number } = {},
): Promise<BatchHandlerBackend> {
  return {
    queue: await createQueue(namespace, {
      leaseMs: 2000,
      concurrency: options.concurrency ?? 8,
    }),
    kv: await createStore(namespace),
  };
}
