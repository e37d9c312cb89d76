// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own queue and store, both on the namespace's database file, so
// that a second worker process finds what the first one left.
import type { ShutdownBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

// Leases (and hand-back delays) far longer than the test: the task the
// first worker's shutdown cuts short can only reach the second worker in
// time if the first one released it.
const LEASE = { minutes: 10 } as const;

/** Opens a process's queue and store on the namespace's file. */
export function open(namespace: string): ShutdownBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({ path, tableName: "fedwork_shutdown_queue", leaseTime: LEASE }),
    kv: new SqliteKvStore({ path, tableName: "fedwork_shutdown_kv" }),
  };
}
