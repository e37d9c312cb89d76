// Pausing and resuming on PostgreSQL: two worker processes with their own
// clients, the pause announced through PostgresPubSub.
import { testPauseAndResume } from "@fedwork/testing";

testPauseAndResume({
  name: "PostgresMessageQueue",
  backendModule: new URL("./testdata/pause-backend.ts", import.meta.url).href,
});
