// The backend of testTaskLimits() in ../task-limits.test.ts: one
// process's queue, store and pub/sub, on the namespace's tables.
import type { ShutdownBackend } from "@fedwork/testing";
import { PostgresKvStore } from "../kv-store.ts";
import { PostgresMessageQueue } from "../message-queue.ts";
import { PostgresPubSub } from "../pubsub.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace's tables. */
export function open(namespace: string): ShutdownBackend {
  const table = tableNameFor(namespace);
  return {
    // A lease long enough for a loaded machine: nothing is killed here.
    queue: new PostgresMessageQueue(POSTGRES_URL, {
      tableName: table,
      leaseTime: { seconds: 30 },
      // Delayed runs (a rate's reserved starts) are handed out within this.
      pollInterval: { milliseconds: 200 },
    }),
    kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` }),
    pubsub: new PostgresPubSub(POSTGRES_URL, { prefix: `${table}:` }),
  };
}
