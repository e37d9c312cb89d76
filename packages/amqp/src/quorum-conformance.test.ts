// The message-queue conformance suite (with its SIGKILL crash test) and the
// federation-over-queue suite, on RabbitMQ quorum queues.
import { testFederationOverQueue, testMessageQueue } from "@fedwork/testing";

testMessageQueue({
  name: "AmqpMessageQueue (quorum queues)",
  factoryModule: new URL("./testdata/quorum-factory.ts", import.meta.url).href,
  durable: true,
  redelivery: true,
  deliveryCount: true,
  poisonKill: "oom",
});

testFederationOverQueue({
  name: "AmqpMessageQueue (quorum queues)",
  factoryModule: new URL("./testdata/quorum-factory.ts", import.meta.url).href,
  redelivery: true,
});
