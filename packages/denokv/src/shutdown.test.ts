// Clean shutdown on Deno KV: a SIGTERMed worker process closes its
// database handles and exits by itself, and the task its grace cut short
// runs again in another process.
import { testGracefulShutdown } from "@fedwork/testing";

testGracefulShutdown({
  name: "DenoKvMessageQueue",
  backendModule: new URL("./testdata/shutdown-backend.ts", import.meta.url).href,
  durable: true,
});
