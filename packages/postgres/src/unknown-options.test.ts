// The constructors refuse options they do not know, with the nearest name,
// so that a misspelt or ported setting never goes silently without effect.
// Nothing connects: the check runs before the first query.
import { assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { PostgresKvStore, type PostgresKvStoreOptions } from "./kv-store.ts";
import { PostgresMessageQueue } from "./message-queue.ts";
import type { PostgresMessageQueueOptions } from "./options.ts";
import { PostgresPubSub, type PostgresPubSubOptions } from "./pubsub.ts";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";

test("new PostgresMessageQueue() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () =>
      new PostgresMessageQueue(POSTGRES_URL, {
        tablename: "jobs",
      } as PostgresMessageQueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "tablename");
  assertMatch(
    error.message,
    /^Unknown option tablename of new PostgresMessageQueue\(\); did you mean tableName\?/,
  );
});

test("new PostgresKvStore() and new PostgresPubSub() refuse an unknown option", () => {
  const store = assertThrows(
    () => new PostgresKvStore(POSTGRES_URL, { shema: "app" } as PostgresKvStoreOptions),
    UnknownOptionError,
  );
  assertMatch(store.message, /of new PostgresKvStore\(\); did you mean schema\?/);
  const pubsub = assertThrows(
    () => new PostgresPubSub(POSTGRES_URL, { channel: "x" } as PostgresPubSubOptions),
    UnknownOptionError,
  );
  assertEquals(pubsub.option, "channel");
});
