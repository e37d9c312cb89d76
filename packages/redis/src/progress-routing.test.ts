// Task progress across processes and capability routing on Redis: each
// stand-in process opens its own connections (queue, store, pub/sub) to
// the same server; plus RedisPubSub on its own.
import { assertEquals, test, within } from "@fedify/fixture";
import { testTaskProgressAndRouting } from "@fedwork/testing";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { RedisPubSub } from "./pubsub.ts";
import { Redis } from "ioredis";
import { openRedisBackend, redisBackendPrefixes } from "./testdata/progress-backend.ts";

testTaskProgressAndRouting({
  name: "RedisMessageQueue",
  open: (namespace) => openRedisBackend({ url: REDIS_URL }, namespace),
  async cleanup(namespace) {
    for (const prefix of redisBackendPrefixes(namespace)) await deleteKeys(prefix);
  },
});

test("RedisPubSub delivers across clients and unsubscribes on abort", async () => {
  const prefix = `fedwork-test-${crypto.randomUUID().slice(0, 8)}`;
  await using publisher = new RedisPubSub({ url: REDIS_URL, prefix });
  await using subscriber = new RedisPubSub({ url: REDIS_URL, prefix });
  const controller = new AbortController();
  const received: string[] = [];
  let resolve!: () => void;
  const two = new Promise<void>((r) => resolve = r);
  await subscriber.subscribe("news", (payload) => {
    received.push(payload);
    if (received.length === 2) resolve();
  }, { signal: controller.signal });
  await subscriber.subscribe("other", () => received.push("wrong topic"), {
    signal: controller.signal,
  });
  await publisher.publish("news", "one");
  await publisher.publish("news", "two");
  await within(two, "two payloads");
  assertEquals(received, ["one", "two"]);
  controller.abort();
  assertEquals(subscriber.subscriptionCount, 0);
});

test("RedisPubSub names a topic's channel <prefix>:<topic>, as the queue and store name keys", async () => {
  const prefix = `fedwork-test-${crypto.randomUUID().slice(0, 8)}`;
  await using pubsub = new RedisPubSub({ url: REDIS_URL, prefix });
  const watcher = new Redis(REDIS_URL);
  try {
    const message = new Promise<[string, string]>((resolve) =>
      watcher.on("message", (channel: string, payload: string) => resolve([channel, payload]))
    );
    await watcher.subscribe(`${prefix}:news`);
    await pubsub.publish("news", "hello");
    assertEquals(await message, [`${prefix}:news`, "hello"]);
  } finally {
    watcher.disconnect();
  }
});
