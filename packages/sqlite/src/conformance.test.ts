import { testFederationOverQueue, testKvStore, testMessageQueue } from "@fedwork/testing";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";
import { SqliteKvStore } from "./kv-store.ts";

testMessageQueue({
  name: "SqliteMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  durable: true,
  leases: true,
  redelivery: true,
  deduplication: true,
  prefetch: true,
  priority: true,
  deliveryCount: true,
  poisonKill: "oom",
});

testKvStore({
  name: "SqliteKvStore",
  createStore: (namespace) => new SqliteKvStore({ path: databasePath(namespace) }),
  cleanup,
});

testFederationOverQueue({
  name: "SqliteMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  redelivery: true,
  deliveryCount: true,
});
