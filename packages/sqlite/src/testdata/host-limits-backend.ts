// The backend of testHostLimits() in ../host-limits.test.ts: one process's
// queue and store on the namespace's database file, eight deliveries at
// once per process, so that the host's limit is what binds.
import type { ShutdownBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue and store on the namespace's file. */
export function open(namespace: string): ShutdownBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({ path, concurrency: 8, pollInterval: { milliseconds: 100 } }),
    kv: new SqliteKvStore({ path }),
  };
}
