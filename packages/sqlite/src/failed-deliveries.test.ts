// Failed deliveries and dead hosts with the records on SQLite.
import { testFailedDeliveries } from "@fedwork/testing";
import { SqliteKvStore } from "./kv-store.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

testFailedDeliveries({
  name: "SqliteKvStore",
  open: (namespace) => new SqliteKvStore({ path: databasePath(namespace) }),
  close: (kv) => (kv as SqliteKvStore)[Symbol.asyncDispose](),
  cleanup,
});
