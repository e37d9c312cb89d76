import { assertEquals, assertThrows, deferred, test, within } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import type { DenoKv } from "./deno-kv.ts";
import { DenoKvStore } from "./kv-store.ts";
import { DenoKvMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath, openKvFile } from "./testdata/conformance-factory.ts";

async function withKv(body: (kv: DenoKv) => Promise<void>): Promise<void> {
  const namespace = `fedwork-denokv-ctor-test-${crypto.randomUUID()}`;
  const opened = await openKvFile(databasePath(namespace));
  try {
    await body(opened.kv);
  } finally {
    opened.close();
    await cleanup(namespace);
  }
}

test("new DenoKvStore(kv) takes the database first, as Fedify's does, and leaves it open", async () => {
  await withKv(async (kv) => {
    const store = new DenoKvStore(kv, { prefix: ["fedify-form"] });
    await store.set(["key"], { value: 1 });
    assertEquals(await store.get(["key"]), { value: 1 });
    await store[Symbol.asyncDispose]();
    // The database is the caller's: it is still open, with the entry in it.
    assertEquals((await kv.get(["fedify-form", "key"])).versionstamp !== null, true);
    await using plain = new DenoKvStore(kv);
    await plain.set(["other"], 2);
    assertEquals((await kv.get(["fedwork", "kv", "other"])).versionstamp !== null, true);
  });
});

test("new DenoKvMessageQueue(kv, options) carries a message and leaves the database open", async () => {
  await withKv(async (kv) => {
    const queue = new DenoKvMessageQueue(kv, { pollInterval: { milliseconds: 100 } });
    const received = deferred<unknown>();
    const controller = new AbortController();
    const listening = queue.listen((message) => received.resolve(message), {
      signal: controller.signal,
    });
    await queue.enqueue({ hello: "fedify" });
    assertEquals(await within(received.promise, "the message"), { hello: "fedify" });
    controller.abort();
    await within(listening, "the listener to stop");
    await queue[Symbol.asyncDispose]();
    assertEquals((await kv.get(["unused"])).versionstamp, null);
  });
});

test("The Deno KV engines name what their first argument must be", () => {
  for (const value of [undefined, null, "fedwork.kv", 42, [], () => {}]) {
    assertThrows(
      // @ts-expect-error: neither a database nor options.
      () => new DenoKvStore(value),
      TypeError,
      "new DenoKvStore() takes an open Deno KV database",
    );
    assertThrows(
      // @ts-expect-error: neither a database nor options.
      () => new DenoKvMessageQueue(value),
      TypeError,
      "new DenoKvMessageQueue() takes an open Deno KV database",
    );
  }
  // An object without Deno KV's methods is taken for options, which need kv.
  // @ts-expect-error: kv is required.
  assertThrows(() => new DenoKvStore({ prefix: ["a"] }), TypeError, "kv option");
});

test("The Deno KV engines refuse options given twice or after an options object", () => {
  const kv = { get() {}, list() {}, atomic() {} } as unknown as DenoKv;
  assertThrows(
    // @ts-expect-error: kv belongs in the first argument only.
    () => new DenoKvStore(kv, { kv }),
    TypeError,
    "give it once",
  );
  assertThrows(
    // @ts-expect-error: a second argument only follows a database.
    () => new DenoKvMessageQueue({ kv }, { prefix: ["a"] }),
    TypeError,
    "only after a Deno KV database",
  );
  assertThrows(
    // @ts-expect-error: options must be an object.
    () => new DenoKvStore(kv, "prefix"),
    TypeError,
    "must be an options object",
  );
});

test("new DenoKvMessageQueue(kv, options) explains Fedify's orderingLockPrefix", () => {
  const kv = { get() {}, list() {}, atomic() {} } as unknown as DenoKv;
  const error = assertThrows(
    // @ts-expect-error: Fedify's option, which Fedwork does not take.
    () => new DenoKvMessageQueue(kv, { orderingLockPrefix: ["lock"] }),
    UnknownOptionError,
    "without a lock",
  );
  assertEquals(error.option, "orderingLockPrefix");
});
