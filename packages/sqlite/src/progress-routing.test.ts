// Capability routing on SQLite, with three federations each opening its
// own connections to one database file, as separate processes on one
// machine would.  SQLite has no cross-process notification, so the
// progress half of the suite (which needs a pub/sub transport) is skipped
// here; it runs on Redis and PostgreSQL.
import { testTaskProgressAndRouting } from "@fedwork/testing";
import { SqliteKvStore } from "./kv-store.ts";
import { SqliteMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

testTaskProgressAndRouting({
  name: "SqliteMessageQueue",
  open(namespace) {
    const path = databasePath(namespace);
    const queue = new SqliteMessageQueue({ path, pollInterval: { milliseconds: 100 } });
    const kv = new SqliteKvStore({ path });
    return {
      queue,
      kv,
      async dispose() {
        await queue[Symbol.asyncDispose]();
        await kv[Symbol.asyncDispose]();
      },
    };
  },
  cleanup,
  progress: false,
});
