import { MemoryKvStore } from "@fedwork/core";
import {
  testFederationOverQueue,
  testGracefulShutdown,
  testKvStore,
  testMessageQueue,
} from "./mod.ts";

testMessageQueue({
  name: "InProcessMessageQueue",
  factoryModule: new URL("./testdata/in-process-factory.ts", import.meta.url).href,
  durable: false,
  redelivery: true,
  priority: true,
});

testKvStore({
  name: "MemoryKvStore",
  createStore: () => new MemoryKvStore(),
});

testFederationOverQueue({
  name: "InProcessMessageQueue",
  factoryModule: new URL("./testdata/in-process-factory.ts", import.meta.url).href,
  redelivery: true,
});

testGracefulShutdown({
  name: "InProcessMessageQueue",
  backendModule: new URL("./testdata/in-process-backend.ts", import.meta.url).href,
  durable: false,
});
