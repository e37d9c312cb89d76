// Durable steps on Redis: worker processes with their own connections, the first SIGKILLed
// between two steps or inside one.
import { testDurableSteps } from "@fedwork/testing";

testDurableSteps({
  name: "RedisMessageQueue",
  backendModule: new URL("./testdata/steps-backend.ts", import.meta.url).href,
});
