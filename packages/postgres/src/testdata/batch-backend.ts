// The backend of testBatchHandlers() in ../batch-handlers.test.ts: a
// process's queue (8 handlers at once, a short lease for the crash test)
// and store, on the namespace's tables.
import type { BatchHandlerBackend } from "@fedwork/testing";
import { PostgresKvStore } from "../kv-store.ts";
import { PostgresMessageQueue } from "../message-queue.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

export { cleanup } from "./shutdown-backend.ts";

/** Opens a process's clients on the namespace's tables. */
export function open(
  namespace: string,
  options: { readonly concurrency?: number } = {},
): BatchHandlerBackend {
  const table = tableNameFor(namespace);
  return {
    queue: new PostgresMessageQueue(POSTGRES_URL, {
      tableName: table,
      concurrency: options.concurrency ?? 8,
      leaseTime: { seconds: 2 },
    }),
    kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` }),
  };
}
