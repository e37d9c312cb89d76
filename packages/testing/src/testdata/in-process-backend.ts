// The backend of testGracefulShutdown() in ../in-process.test.ts: a worker
// process's own in-memory queue and store, which no other process sees.
import { InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";
import type { ShutdownBackend } from "../shutdown-suite.ts";

/** Opens a process's engines; the namespace is not needed in memory. */
export function open(_namespace: string): ShutdownBackend {
  return { queue: new InProcessMessageQueue(), kv: new MemoryKvStore() };
}
