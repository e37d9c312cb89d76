// The backend of testDurableSteps() in ../steps.test.ts: a process's own
// queue (with a short lease, so that a killed worker's message comes back
// soon) and store, both on the namespace's database file.
import type { DurableStepsBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's engines on the namespace's file. */
export function open(namespace: string): DurableStepsBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({
      path,
      pollInterval: { milliseconds: 100 },
      leaseTime: { seconds: 3 },
    }),
    kv: new SqliteKvStore({ path }),
  };
}
