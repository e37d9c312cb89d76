// Clean shutdown on PostgreSQL: a SIGTERMed worker process ends its pools
// and LISTEN connections and exits by itself, and the task its grace cut
// short runs again in another process.
import { testGracefulShutdown } from "@fedwork/testing";

testGracefulShutdown({
  name: "PostgresMessageQueue",
  backendModule: new URL("./testdata/shutdown-backend.ts", import.meta.url).href,
  durable: true,
});
