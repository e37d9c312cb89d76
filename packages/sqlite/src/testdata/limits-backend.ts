// The backend of testTaskLimits() in ../task-limits.test.ts: one
// process's queue and store, both on the namespace's database file.
import type { ShutdownBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue and store on the namespace's file. */
export function open(namespace: string): ShutdownBackend {
  const path = databasePath(namespace);
  return {
    // A lease long enough for a loaded machine: nothing is killed here.
    queue: new SqliteMessageQueue({
      path,
      leaseTime: { seconds: 30 },
      pollInterval: { milliseconds: 100 },
    }),
    kv: new SqliteKvStore({ path }),
  };
}
