// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own queue and store, each with its own handle on the
// namespace's database file.
import type { ShutdownBackend } from "@fedwork/testing";
import { createQueue, createStore } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue and store on the namespace's file. */
export async function open(namespace: string): Promise<ShutdownBackend> {
  return {
    // A lease far longer than the test: the task the first worker's
    // shutdown cuts short can only reach the second worker in time if
    // the first one released it.
    queue: await createQueue(namespace, { leaseMs: 600_000 }),
    kv: await createStore(namespace),
  };
}
