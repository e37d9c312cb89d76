// What the store suites of @fedwork/testing (failed deliveries, webhooks,
// task retention) take to run on PostgresKvStore: one table per test.
import postgres from "postgres";
import type { KvStore } from "@fedwork/core";
import { PostgresKvStore } from "../kv-store.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

/** The store's name, how to open and close it, and how to drop its table. */
export const postgresKvSuiteOptions = {
  name: "PostgresKvStore",
  open: (namespace: string): KvStore =>
    new PostgresKvStore(POSTGRES_URL, { tableName: tableNameFor(namespace) }),
  close: (kv: KvStore): Promise<void> => (kv as PostgresKvStore)[Symbol.asyncDispose](),
  async cleanup(namespace: string): Promise<void> {
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    try {
      await sql.unsafe(`DROP TABLE IF EXISTS "${tableNameFor(namespace)}"`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
};
