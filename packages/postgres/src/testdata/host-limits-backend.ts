// The backend of testHostLimits() in ../host-limits.test.ts: one process's
// queue and store on the namespace's tables, eight deliveries at once per
// process, so that the host's limit is what binds.
import type { ShutdownBackend } from "@fedwork/testing";
import { PostgresKvStore } from "../kv-store.ts";
import { PostgresMessageQueue } from "../message-queue.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace's tables. */
export function open(namespace: string): ShutdownBackend {
  const table = tableNameFor(namespace);
  return {
    queue: new PostgresMessageQueue(POSTGRES_URL, { tableName: table, concurrency: 8 }),
    kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` }),
  };
}
