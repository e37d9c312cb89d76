// The constructors refuse options they do not know, with the nearest name,
// so that a misspelt or ported setting never goes silently without effect.
import { assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { SqliteKvStore } from "./kv-store.ts";
import { SqliteMessageQueue } from "./message-queue.ts";
import type { SqliteMessageQueueOptions } from "./options.ts";

test("new SqliteMessageQueue() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () =>
      new SqliteMessageQueue({
        path: ":memory:",
        leasetime: { seconds: 30 },
      } as SqliteMessageQueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "leasetime");
  assertMatch(
    error.message,
    /^Unknown option leasetime of new SqliteMessageQueue\(\); did you mean leaseTime\?/,
  );
});

test("new SqliteKvStore() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () => new SqliteKvStore({ path: ":memory:", table: "kv" } as { path: string }),
    UnknownOptionError,
  );
  assertEquals(error.option, "table");
  assertMatch(
    error.message,
    /of new SqliteKvStore\(\).*The options are busyTimeout, path, tableName\./,
  );
});
