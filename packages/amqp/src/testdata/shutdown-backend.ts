// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own connection to the broker, on the namespace's queues.  AMQP
// holds no key–value store: each process keeps its own in memory.
import { MemoryKvStore } from "@fedwork/core";
import type { ShutdownBackend } from "@fedwork/testing";
import { createQueue } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue on the namespace. */
export function open(namespace: string): ShutdownBackend {
  // A redelivery delay far longer than the test: the task the first
  // worker's shutdown cuts short can only reach the second worker in time
  // if the first one gave it back at once.
  return { queue: createQueue(namespace, { leaseMs: 600_000 }), kv: new MemoryKvStore() };
}
