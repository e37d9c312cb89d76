import { testFederationOverQueue, testKvStore, testMessageQueue } from "@fedwork/testing";
import { cleanup, createStore } from "./testdata/conformance-factory.ts";

// On Deno these run on Deno.openKv(); on Node.js and Bun on the @deno/kv
// package (see the factory).
testMessageQueue({
  name: "DenoKvMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  durable: true,
  redelivery: true,
  deduplication: true,
  prefetch: true,
  deliveryCount: true,
});

testKvStore({
  name: "DenoKvStore",
  createStore,
  cleanup,
});

testFederationOverQueue({
  name: "DenoKvMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  redelivery: true,
});
