// The constructors refuse options they do not know, with the nearest name,
// so that a misspelt or ported setting never goes silently without effect.
// Nothing connects: the check runs before any client is made.
import { assertEquals, assertMatch, assertThrows, test } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { RedisKvStore, type RedisKvStoreOptions } from "./kv-store.ts";
import { RedisMessageQueue } from "./message-queue.ts";
import { RedisPubSub, type RedisPubSubOptions } from "./pubsub.ts";
import type { RedisMessageQueueOptions } from "./options.ts";
import { REDIS_URL } from "./testdata/conformance-factory.ts";

test("new RedisMessageQueue() refuses an unknown option, suggesting the nearest name", () => {
  const error = assertThrows(
    () =>
      new RedisMessageQueue({
        url: REDIS_URL,
        concurency: 4,
      } as RedisMessageQueueOptions),
    UnknownOptionError,
  );
  assertEquals(error.option, "concurency");
  assertMatch(
    error.message,
    /^Unknown option concurency of new RedisMessageQueue\(\); did you mean concurrency\?/,
  );
});

test("new RedisKvStore() and new RedisPubSub() refuse an unknown option", () => {
  const store = assertThrows(
    () => new RedisKvStore({ url: REDIS_URL, prefx: "app" } as RedisKvStoreOptions),
    UnknownOptionError,
  );
  assertMatch(store.message, /of new RedisKvStore\(\); did you mean prefix\?/);
  const pubsub = assertThrows(
    () => new RedisPubSub({ url: REDIS_URL, keyPrefix: "app" } as RedisPubSubOptions),
    UnknownOptionError,
  );
  assertEquals(pubsub.option, "keyPrefix");
});

test("the queue, the KV store and the pub/sub take one prefix rule, refusing a trailing colon", () => {
  const constructors: [string, () => unknown][] = [
    ["new RedisMessageQueue()", () => new RedisMessageQueue({ url: REDIS_URL, prefix: "app:" })],
    ["new RedisKvStore()", () => new RedisKvStore({ url: REDIS_URL, prefix: "app:" })],
    ["new RedisPubSub()", () => new RedisPubSub({ url: REDIS_URL, prefix: "app:" })],
  ];
  for (const [where, make] of constructors) {
    const error = assertThrows(make, RangeError);
    assertMatch(
      error.message,
      new RegExp(`^The prefix option of ${where.replace(/[()]/g, "\\$&")}`),
    );
    assertMatch(error.message, /must not end with ":".*got "app:"/);
  }
});
