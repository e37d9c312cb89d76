// The backend of testBatchHandlers() in ../batch-handlers.test.ts: a
// process's queue (8 handlers at once, a short lease for the crash test)
// and store, both on the namespace's database file.
import type { BatchHandlerBackend } from "@fedwork/testing";
import { SqliteKvStore } from "../kv-store.ts";
import { SqliteMessageQueue } from "../message-queue.ts";
import { databasePath } from "./conformance-factory.ts";

export { cleanup } from "./conformance-factory.ts";

/** Opens a process's queue and store on the namespace's file. */
export function open(
  namespace: string,
  options: { readonly concurrency?: number } = {},
): BatchHandlerBackend {
  const path = databasePath(namespace);
  return {
    queue: new SqliteMessageQueue({
      path,
      concurrency: options.concurrency ?? 8,
      leaseTime: { seconds: 2 },
      pollInterval: { milliseconds: 100 },
    }),
    kv: new SqliteKvStore({ path }),
  };
}
