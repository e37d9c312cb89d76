// Durable steps on PostgreSQL: worker processes with their own clients, the first SIGKILLed
// between two steps or inside one.
import { testDurableSteps } from "@fedwork/testing";

testDurableSteps({
  name: "PostgresMessageQueue",
  backendModule: new URL("./testdata/steps-backend.ts", import.meta.url).href,
});
