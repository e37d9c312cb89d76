import { assertEquals, assertThrows, test } from "@fedify/fixture";
import { Redis } from "ioredis";
import { deleteKeys, REDIS_URL } from "./testdata/conformance-factory.ts";
import { RedisKvStore } from "./kv-store.ts";

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
