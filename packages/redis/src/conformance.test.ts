import { testFederationOverQueue, testKvStore, testMessageQueue } from "@fedwork/testing";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { RedisKvStore } from "./kv-store.ts";

testMessageQueue({
  name: "RedisMessageQueue",
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
  name: "RedisKvStore",
  createStore: (namespace) => new RedisKvStore({ url: REDIS_URL, prefix: namespace }),
  cleanup: (namespace) => deleteKeys(`${namespace}:`),
});

testFederationOverQueue({
  name: "RedisMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  redelivery: true,
  // Web here, workers in child processes killed by their listener.
  deliveryCount: true,
});
