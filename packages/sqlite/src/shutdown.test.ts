// Clean shutdown on SQLite: a SIGTERMed worker process exits by itself,
// and the task its grace cut short runs again in another process.
import { testGracefulShutdown } from "@fedwork/testing";

testGracefulShutdown({
  name: "SqliteMessageQueue",
  backendModule: new URL("./testdata/shutdown-backend.ts", import.meta.url).href,
  durable: true,
});
