// Per-task retention of the task records on SQLite.
import { testTaskRetention } from "@fedwork/testing";
import { SqliteKvStore } from "./kv-store.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

testTaskRetention({
  name: "SqliteKvStore",
  open: (namespace) => new SqliteKvStore({ path: databasePath(namespace) }),
  close: (kv) => (kv as SqliteKvStore)[Symbol.asyncDispose](),
  cleanup,
});
