// handleMany tasks on the in-process queue (the same suite runs on every
// durable backend's package).
import { testBatchHandlers } from "./mod.ts";

testBatchHandlers({
  name: "InProcessMessageQueue",
  backendModule: new URL("./testdata/in-process-batch-backend.ts", import.meta.url).href,
  durable: false,
});
