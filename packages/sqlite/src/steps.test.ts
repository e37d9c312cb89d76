// Durable steps on SQLite: worker processes on one file, the first SIGKILLed
// between two steps or inside one.
import { testDurableSteps } from "@fedwork/testing";

testDurableSteps({
  name: "SqliteMessageQueue",
  backendModule: new URL("./testdata/steps-backend.ts", import.meta.url).href,
});
