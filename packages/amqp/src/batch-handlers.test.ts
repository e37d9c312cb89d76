// handleMany tasks on RabbitMQ: runs fill from the prefetched deliveries, wait, item retries
// and a worker process killed in the middle of a run.
import { testBatchHandlers } from "@fedwork/testing";

testBatchHandlers({
  name: "AmqpMessageQueue",
  backendModule: new URL("./testdata/batch-backend.ts", import.meta.url).href,
  durable: true,
  yieldsSlots: true,
  claimsBatches: true,
});
