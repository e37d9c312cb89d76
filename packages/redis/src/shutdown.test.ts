// Clean shutdown on Redis: a SIGTERMed worker process closes its queue,
// store and pub/sub connections and exits by itself, and the task its
// grace cut short runs again in another process.
import { testGracefulShutdown } from "@fedwork/testing";

testGracefulShutdown({
  name: "RedisMessageQueue",
  backendModule: new URL("./testdata/shutdown-backend.ts", import.meta.url).href,
  durable: true,
});
