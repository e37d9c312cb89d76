// Worker presence kept on PostgreSQL, and the concurrency of
// PostgresMessageQueue.
import { testWorkerPresence } from "@fedwork/testing";
import postgres from "postgres";
import { PostgresKvStore } from "./kv-store.ts";
import { PostgresMessageQueue } from "./message-queue.ts";
import { POSTGRES_URL, tableNameFor } from "./testdata/conformance-factory.ts";

testWorkerPresence({
  name: "PostgresKvStore",
  open: (namespace) => new PostgresKvStore(POSTGRES_URL, { tableName: tableNameFor(namespace) }),
  close: (kv) => (kv as PostgresKvStore)[Symbol.asyncDispose](),
  // The store has the namespace's table; the queue gets one beside it.
  openQueue: (namespace, { concurrency }) =>
    new PostgresMessageQueue(POSTGRES_URL, {
      tableName: `${tableNameFor(namespace)}_queue`,
      concurrency,
    }),
  async cleanup(namespace) {
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    try {
      for (const table of [tableNameFor(namespace), `${tableNameFor(namespace)}_queue`]) {
        await sql.unsafe(`DROP TABLE IF EXISTS "${table}"`);
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
});
