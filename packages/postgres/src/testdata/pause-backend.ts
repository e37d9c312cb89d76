// The backend of testPauseAndResume() in ../pause.test.ts: a process's own
// queue, store and pub/sub clients on the namespace's tables.
import type { PauseBackend } from "@fedwork/testing";
import { PostgresKvStore } from "../kv-store.ts";
import { PostgresMessageQueue } from "../message-queue.ts";
import { PostgresPubSub } from "../pubsub.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace's tables. */
export function open(namespace: string): PauseBackend {
  const table = tableNameFor(namespace);
  return {
    queue: new PostgresMessageQueue(POSTGRES_URL, { tableName: table }),
    kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` }),
    pubsub: new PostgresPubSub(POSTGRES_URL, { prefix: `${table}:` }),
  };
}
