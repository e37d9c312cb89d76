// The backend of testWorkerMachines() in ../machines.test.ts: a process's
// own queue, store and SqlitePubSub on the namespace's database file; the
// queue runs one message at a time, so that a held task leaves the next
// one to the other worker process.
import type { ShutdownBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { SqlitePubSub } from "../pubsub.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue, store and pub/sub on the namespace's file. */
export function open(namespace: string): ShutdownBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({
      path,
      concurrency: 1,
      prefetch: 0,
      pollInterval: { milliseconds: 100 },
    }),
    kv: new SqliteKvStore({ path }),
    pubsub: new SqlitePubSub({ path }),
  };
}
