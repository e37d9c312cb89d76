// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own queue and store, both on the namespace's database file, so
// that a second worker process finds what the first one left.
import type { ShutdownBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue and store on the namespace's file. */
export function open(namespace: string): ShutdownBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({ path, tableName: "fedwork_shutdown_queue" }),
    kv: new SqliteKvStore({ path, tableName: "fedwork_shutdown_kv" }),
  };
}
