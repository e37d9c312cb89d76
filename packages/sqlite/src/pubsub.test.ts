import { assertEquals, assertRejects, assertThrows, deferred, test, within } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { SqliteClosedError, SqliteIdentifierError } from "./errors.ts";
import type { SqlitePubSubOptions } from "./options.ts";
import { SqlitePubSub } from "./pubsub.ts";
import { cleanup, databasePath } from "./testdata/conformance-factory.ts";

async function withDatabase(body: (path: string) => Promise<void>): Promise<void> {
  const namespace = `fedwork-sqlite-pubsub-${crypto.randomUUID()}`;
  try {
    await body(databasePath(namespace));
  } finally {
    await cleanup(namespace);
  }
}

test("new SqlitePubSub() refuses invalid options, naming the option", () => {
  const path = databasePath("never-opened");
  assertThrows(() => new SqlitePubSub({ path: ":memory:" }), TypeError, "path");
  assertThrows(
    () => new SqlitePubSub({ path, tableName: "x; DROP TABLE y" }),
    SqliteIdentifierError,
    "tableName",
  );
  assertThrows(
    () => new SqlitePubSub({ path, pollInterval: { milliseconds: 0 } }),
    RangeError,
    "pollInterval",
  );
  assertThrows(
    () => new SqlitePubSub({ path, retention: { seconds: -1 } }),
    RangeError,
    "retention",
  );
  const error = assertThrows(
    () => new SqlitePubSub({ path, pollintervall: 5 } as unknown as SqlitePubSubOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "pollintervall");
});

test("SqlitePubSub delivers payloads between instances on one file, in order, by topic", async () => {
  await withDatabase(async (path) => {
    await using publisher = new SqlitePubSub({ path, pollInterval: { milliseconds: 10 } });
    await using subscriber = new SqlitePubSub({ path, pollInterval: { milliseconds: 10 } });
    const controller = new AbortController();
    const received: string[] = [];
    const local: string[] = [];
    const done = deferred();
    await subscriber.subscribe("news", (payload) => {
      received.push(payload);
      if (received.length === 3) done.resolve();
    }, { signal: controller.signal });
    // The publishing instance's own subscribers get its payloads too.
    await publisher.subscribe("news", (payload) => void local.push(payload), {
      signal: controller.signal,
    });
    await publisher.publish("other", "not for news");
    for (const payload of ["a", "b", "c"]) await publisher.publish("news", payload);
    await within(done.promise, "three payloads in the other instance");
    assertEquals(received, ["a", "b", "c"]);
    assertEquals(local, ["a", "b", "c"]);
    assertEquals(subscriber.subscriptionCount, 1);
    controller.abort();
    assertEquals(subscriber.subscriptionCount, 0);
  });
});

test("SqlitePubSub does not deliver what was published before the subscription", async () => {
  await withDatabase(async (path) => {
    await using publisher = new SqlitePubSub({ path, pollInterval: { milliseconds: 10 } });
    await using subscriber = new SqlitePubSub({ path, pollInterval: { milliseconds: 10 } });
    await publisher.publish("news", "old");
    const controller = new AbortController();
    const received: string[] = [];
    const fresh = deferred();
    await subscriber.subscribe("news", (payload) => {
      received.push(payload);
      if (payload === "new") fresh.resolve();
    }, { signal: controller.signal });
    await publisher.publish("news", "new");
    await within(fresh.promise, "the payload published after subscribing");
    assertEquals(received, ["new"]);
    controller.abort();
  });
});

test("SqlitePubSub keeps delivering when a listener throws, and refuses calls after disposal", async () => {
  await withDatabase(async (path) => {
    const publisher = new SqlitePubSub({ path, pollInterval: { milliseconds: 10 } });
    const subscriber = new SqlitePubSub({ path, pollInterval: { milliseconds: 10 } });
    const second = deferred<string>();
    await subscriber.subscribe("news", () => {
      throw new Error("listener bug");
    });
    await subscriber.subscribe("news", (payload) => second.resolve(payload));
    await publisher.publish("news", "still delivered");
    assertEquals(await within(second.promise, "the second listener"), "still delivered");
    await subscriber[Symbol.asyncDispose]();
    assertEquals(subscriber.subscriptionCount, 0);
    await assertRejects(() => subscriber.subscribe("news", () => {}), SqliteClosedError);
    await publisher[Symbol.asyncDispose]();
    await assertRejects(() => publisher.publish("news", "x"), SqliteClosedError);
  });
});
