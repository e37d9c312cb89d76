// Worker presence kept on SQLite, and the concurrency of SqliteMessageQueue.
import { testWorkerPresence } from "@fedwork/testing";
import { SqliteKvStore } from "./kv-store.ts";
import { SqliteMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

testWorkerPresence({
  name: "SqliteKvStore",
  open: (namespace) => new SqliteKvStore({ path: databasePath(namespace) }),
  close: (kv) => (kv as SqliteKvStore)[Symbol.asyncDispose](),
  openQueue: (namespace, { concurrency }) =>
    new SqliteMessageQueue({ path: databasePath(namespace), concurrency }),
  cleanup,
});
