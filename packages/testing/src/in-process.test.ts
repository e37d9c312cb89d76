import { testMessageQueue } from "./mod.ts";

testMessageQueue({
  name: "InProcessMessageQueue",
  factoryModule: new URL("./in-process-factory.ts", import.meta.url).href,
  durable: false,
});
