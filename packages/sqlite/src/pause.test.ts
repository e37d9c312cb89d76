// Pausing and resuming on SQLite: two worker processes on one file, the
// pause announced through SqlitePubSub.
import { testPauseAndResume } from "@fedwork/testing";

testPauseAndResume({
  name: "SqliteMessageQueue",
  backendModule: new URL("./testdata/pause-backend.ts", import.meta.url).href,
});
