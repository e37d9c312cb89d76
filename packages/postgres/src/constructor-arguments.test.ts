import { assertEquals, assertThrows, deferred, test, within } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import postgres from "postgres";
import { POSTGRES_URL } from "./testdata/conformance-factory.ts";
import { PostgresKvStore } from "./kv-store.ts";
import { PostgresMessageQueue } from "./message-queue.ts";

function uniqueTable(): string {
  return `fedwork_ctortest_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

test("PostgresMessageQueue takes Fedify's form and options: sql first, then tableName, channelName, pollInterval", async () => {
  const tableName = uniqueTable();
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  const queue = new PostgresMessageQueue(sql, {
    tableName,
    channelName: `${tableName}_wake`,
    pollInterval: { seconds: 1 },
    initialized: false,
  });
  const controller = new AbortController();
  try {
    const received = deferred<unknown>();
    const listening = queue.listen((message) => received.resolve(message), {
      signal: controller.signal,
    });
    await queue.enqueue({ hello: "fedify" });
    assertEquals(await within(received.promise, "the message"), { hello: "fedify" });
    controller.abort();
    await within(listening, "the listener to stop");
    await queue[Symbol.asyncDispose]();
    // The client is the caller's: still open.
    assertEquals((await sql`SELECT 1 AS one`)[0].one, 1);
  } finally {
    controller.abort();
    await sql.unsafe(`DROP TABLE IF EXISTS "${tableName}"`);
    await sql.end({ timeout: 5 });
  }
});

test("The PostgreSQL engines name what their first argument must be", () => {
  for (const value of [undefined, null, 5432, { url: POSTGRES_URL }, () => {}]) {
    assertThrows(
      // @ts-expect-error: neither a client nor a URL.
      () => new PostgresKvStore(value),
      TypeError,
      "The first argument of new PostgresKvStore() must be a postgres.js Sql client",
    );
    assertThrows(
      // @ts-expect-error: neither a client nor a URL.
      () => new PostgresMessageQueue(value),
      TypeError,
      "The first argument of new PostgresMessageQueue() must be a postgres.js Sql client",
    );
  }
});

test("new PostgresMessageQueue(sql, options) explains Fedify's handlerTimeout", () => {
  const error = assertThrows(
    // @ts-expect-error: Fedify's option, which Fedwork does not take.
    () => new PostgresMessageQueue(POSTGRES_URL, { handlerTimeout: { seconds: 60 } }),
    UnknownOptionError,
    "does not time handlers out",
  );
  assertEquals(error.option, "handlerTimeout");
});
