// Webhooks kept on SQLite.
import { testWebhooks } from "@fedwork/testing";
import { SqliteKvStore } from "./kv-store.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

testWebhooks({
  name: "SqliteKvStore",
  open: (namespace) => new SqliteKvStore({ path: databasePath(namespace) }),
  close: (kv) => (kv as SqliteKvStore)[Symbol.asyncDispose](),
  cleanup,
});
