import { testFederationOverQueue, testKvStore, testMessageQueue } from "@fedwork/testing";
import { POSTGRES_URL, tableNameFor } from "./testdata/conformance-factory.ts";
import { PostgresKvStore } from "./kv-store.ts";
import postgres from "postgres";

testMessageQueue({
  name: "PostgresMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  durable: true,
  leases: true,
  redelivery: true,
  deduplication: true,
  prefetch: true,
  priority: true,
  deliveryCount: true,
});

testKvStore({
  name: "PostgresKvStore",
  createStore: (namespace) =>
    new PostgresKvStore(POSTGRES_URL, { tableName: tableNameFor(namespace) }),
  async cleanup(namespace) {
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    try {
      await sql.unsafe(`DROP TABLE IF EXISTS "${tableNameFor(namespace)}"`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
});

testFederationOverQueue({
  name: "PostgresMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  redelivery: true,
  deliveryCount: true,
});
