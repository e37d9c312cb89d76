// The backend of testPauseAndResume() in ../pause.test.ts: a process's own
// queue, store and SqlitePubSub, all on the namespace's database file.
import type { PauseBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { SqlitePubSub } from "../pubsub.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's engines on the namespace's file. */
export function open(namespace: string): PauseBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({ path, pollInterval: { milliseconds: 100 } }),
    kv: new SqliteKvStore({ path }),
    pubsub: new SqlitePubSub({ path }),
  };
}
