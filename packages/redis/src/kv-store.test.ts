import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { assertEquals, assertThrows, delay, test, within } from "@fedify/fixture";
import { Redis } from "ioredis";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { RedisKvStore } from "./kv-store.ts";
import { RedisMessageQueue } from "./message-queue.ts";

test("RedisKvStore needs exactly one way to connect", () => {
  assertThrows(() => new RedisKvStore({}), TypeError, "exactly one of the client");
  assertThrows(() => new RedisKvStore({ url: REDIS_URL, prefix: "" }), TypeError, "prefix");
});

test("RedisKvStore stores keys under its prefix and leaves a client passed in open", async () => {
  const prefix = `fedwork-test-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const client = new Redis(REDIS_URL);
  try {
    const store = new RedisKvStore({ client, prefix });
    await store.set(["a", "b"], { z: 1, a: [2] });
    assertEquals(await client.get(`${prefix}:kv:["a","b"]`), '{"a":[2],"z":1}');
    await store[Symbol.asyncDispose]();
    assertEquals(await client.ping(), "PONG");
  } finally {
    await deleteKeys(`${prefix}:`);
    await client.quit();
  }
});

test("RedisKvStore and RedisMessageQueue close at once when their Redis cannot be reached", async () => {
  // A port nothing listens on: ioredis keeps reconnecting (for over a
  // minute by default), and closing must not wait for it.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
  const url = `redis://127.0.0.1:${port}`;
  const store = new RedisKvStore({ url });
  const queue = new RedisMessageQueue({ url });
  // Commands waiting for the connection (ioredis leaves them unsettled
  // when a reconnecting client is dropped; nothing then keeps the process).
  void store.get(["a"]).catch(() => {});
  void queue.enqueue("m").catch(() => {});
  await delay(300); // Past the first failed connection, into reconnecting.
  // Well under ioredis's own give-up time (over a minute).
  await within(store[Symbol.asyncDispose](), "the store to close", 10_000);
  await within(queue[Symbol.asyncDispose](), "the queue to close", 10_000);
});
