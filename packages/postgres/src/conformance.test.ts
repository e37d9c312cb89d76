import { testMessageQueue } from "@fedwork/testing";

testMessageQueue({
  name: "PostgresMessageQueue",
  factoryModule: new URL("./conformance-factory.ts", import.meta.url).href,
  durable: true,
});
