// handleMany tasks on Deno KV: runs fill from one claim, wait, item retries
// and a worker process killed in the middle of a run.  On Deno.openKv() on
// Deno, on the @deno/kv package on Node.js and Bun (see the factory).
import { testBatchHandlers } from "@fedwork/testing";

testBatchHandlers({
  name: "DenoKvMessageQueue",
  backendModule: new URL("./testdata/batch-backend.ts", import.meta.url).href,
  durable: true,
  yieldsSlots: true,
  claimsBatches: true,
});
