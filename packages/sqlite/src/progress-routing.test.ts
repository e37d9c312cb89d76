// Task progress, cancellation and capability routing on SQLite, with
// federations that each open their own connections to one database file,
// as separate processes on one machine would; progress and cancellation
// requests travel through SqlitePubSub.  cross-process.test.ts does the
// same with real processes.
import { testTaskProgressAndRouting } from "@fedwork/testing";
import { SqliteKvStore } from "./kv-store.ts";
import { SqliteMessageQueue } from "./message-queue.ts";
import { SqlitePubSub } from "./pubsub.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

testTaskProgressAndRouting({
  name: "SqliteMessageQueue",
  open(namespace) {
    const path = databasePath(namespace);
    const queue = new SqliteMessageQueue({ path, pollInterval: { milliseconds: 100 } });
    const kv = new SqliteKvStore({ path });
    const pubsub = new SqlitePubSub({ path });
    return {
      queue,
      kv,
      pubsub,
      async dispose() {
        await queue[Symbol.asyncDispose]();
        await pubsub[Symbol.asyncDispose]();
        await kv[Symbol.asyncDispose]();
      },
    };
  },
  cleanup,
});
