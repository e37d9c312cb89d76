// The backend of testDurableSteps() in ../steps.test.ts: a process's own
// queue (with a short lease, so that a killed worker's message comes back
// soon) and store clients on the namespace's tables.
import type { DurableStepsBackend } from "@fedwork/testing";
import { PostgresKvStore } from "../kv-store.ts";
import { PostgresMessageQueue } from "../message-queue.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace's tables. */
export function open(namespace: string): DurableStepsBackend {
  const table = tableNameFor(namespace);
  return {
    queue: new PostgresMessageQueue(POSTGRES_URL, {
      tableName: table,
      leaseTime: { seconds: 3 },
    }),
    kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` }),
  };
}
