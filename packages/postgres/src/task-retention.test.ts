// Per-task retention of the task records on PostgreSQL.
import { testTaskRetention } from "@fedwork/testing";
import postgres from "postgres";
import { PostgresKvStore } from "./kv-store.ts";
import { POSTGRES_URL, tableNameFor } from "./testdata/conformance-factory.ts";

testTaskRetention({
  name: "PostgresKvStore",
  open: (namespace) => new PostgresKvStore(POSTGRES_URL, { tableName: tableNameFor(namespace) }),
  close: (kv) => (kv as PostgresKvStore)[Symbol.asyncDispose](),
  async cleanup(namespace) {
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    try {
      await sql.unsafe(`DROP TABLE IF EXISTS "${tableNameFor(namespace)}"`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
});
