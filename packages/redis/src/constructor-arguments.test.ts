import { assertEquals, assertThrows, deferred, test, within } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { Redis } from "ioredis";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { RedisKvStore } from "./kv-store.ts";
import { RedisMessageQueue } from "./message-queue.ts";

function testPrefix(): string {
  return `fedwork-ctor-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

test("new RedisKvStore(redis) takes the client first, as Fedify's does, and leaves it open", async () => {
  const prefix = testPrefix();
  const client = new Redis(REDIS_URL);
  try {
    const store = new RedisKvStore(client, { prefix });
    await store.set(["a"], { value: 1 });
    assertEquals(await client.get(`${prefix}:kv:["a"]`), '{"value":1}');
    assertEquals(await store.get(["a"]), { value: 1 });
    await store[Symbol.asyncDispose]();
    assertEquals(await client.ping(), "PONG");
  } finally {
    await deleteKeys(`${prefix}:`);
    await client.quit();
  }
});

test("new RedisMessageQueue(() => redis) carries a message and closes the clients it got", async () => {
  const prefix = testPrefix();
  const created: Redis[] = [];
  const queue = new RedisMessageQueue(() => {
    const client = new Redis(REDIS_URL);
    created.push(client);
    return client;
  }, { prefix, pollInterval: { milliseconds: 200 } });
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
  } finally {
    controller.abort();
    await queue[Symbol.asyncDispose]();
    await deleteKeys(`{${prefix}:`);
  }
  // As with Fedify's queue, the clients from the factory are the queue's.
  assertEquals(created.length > 0, true);
  assertEquals(created.map((client) => client.status), created.map(() => "end"));
});

test("new RedisMessageQueue(redis) borrows a client and leaves it open", async () => {
  const prefix = testPrefix();
  const client = new Redis(REDIS_URL);
  try {
    const queue = new RedisMessageQueue(client, { prefix });
    await queue.enqueue("kept");
    assertEquals((await queue.getDepth()).queued, 1);
    await queue[Symbol.asyncDispose]();
    assertEquals(await client.ping(), "PONG");
  } finally {
    await deleteKeys(`{${prefix}:`);
    await client.quit();
  }
});

test("The Redis engines name what their first argument must be", () => {
  for (const value of [undefined, null, REDIS_URL, 6379, []]) {
    assertThrows(
      // @ts-expect-error: neither a client nor options.
      () => new RedisKvStore(value),
      TypeError,
      "new RedisKvStore() takes an ioredis Redis or Cluster client",
    );
    assertThrows(
      // @ts-expect-error: neither a client nor options.
      () => new RedisMessageQueue(value),
      TypeError,
      "new RedisMessageQueue() takes an ioredis Redis or Cluster client",
    );
  }
});

test("The Redis engines refuse a connection given twice or options after options", () => {
  const client = new Redis(REDIS_URL, { lazyConnect: true });
  assertThrows(
    // @ts-expect-error: the connection belongs in the first argument only.
    () => new RedisKvStore(client, { url: REDIS_URL }),
    TypeError,
    "the url option cannot come too",
  );
  assertThrows(
    // @ts-expect-error: a second argument only follows a client.
    () => new RedisMessageQueue({ client }, { queue: "a" }),
    TypeError,
    "only after a Redis client",
  );
  client.disconnect();
});

test("The Redis engines explain the options of Fedify's that they do not take", () => {
  const client = new Redis(REDIS_URL, { lazyConnect: true });
  const cases: [() => unknown, string, string][] = [
    // @ts-expect-error: Fedify's option.
    [() => new RedisKvStore(client, { keyPrefix: "app::" }), "keyPrefix", "prefix option"],
    // @ts-expect-error: Fedify's option.
    [() => new RedisKvStore(client, { codec: {} }), "codec", "JSON text"],
    // @ts-expect-error: Fedify's option.
    [() => new RedisMessageQueue(() => client, { queueKey: "q" }), "queueKey", "queue"],
    // @ts-expect-error: Fedify's option.
    [() => new RedisMessageQueue(() => client, { lockKey: "l" }), "lockKey", "lease"],
    // @ts-expect-error: Fedify's option.
    [() => new RedisMessageQueue(() => client, { workerId: "w" }), "workerId", "lease owner"],
  ];
  for (const [construct, option, advice] of cases) {
    const error = assertThrows(construct, UnknownOptionError, advice);
    assertEquals(error.option, option);
  }
  client.disconnect();
});
