import { testFederationOverQueue, testMessageQueue } from "@fedwork/testing";

testMessageQueue({
  name: "AmqpMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  durable: true,
  redelivery: true,
  priority: true,
});

testFederationOverQueue({
  name: "AmqpMessageQueue",
  factoryModule: new URL("./testdata/conformance-factory.ts", import.meta.url).href,
  redelivery: true,
});
