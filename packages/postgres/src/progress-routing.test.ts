// Task progress across processes and capability routing on PostgreSQL:
// each stand-in process opens its own clients (queue, store, pub/sub) to
// the same database; plus PostgresPubSub on its own.
import { assertEquals, assertRejects, test, within } from "@fedify/fixture";
import { testTaskProgressAndRouting } from "@fedwork/testing";
import postgres from "postgres";
import { POSTGRES_URL, tableNameFor } from "./testdata/conformance-factory.ts";
import { PostgresKvStore } from "./kv-store.ts";
import { PostgresMessageQueue } from "./message-queue.ts";
import { PostgresPubSub } from "./pubsub.ts";

testTaskProgressAndRouting({
  name: "PostgresMessageQueue",
  open(namespace) {
    const table = tableNameFor(namespace);
    const queue = new PostgresMessageQueue(POSTGRES_URL, { tableName: table });
    const kv = new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` });
    const pubsub = new PostgresPubSub(POSTGRES_URL, { prefix: `${table}:` });
    return {
      queue,
      kv,
      pubsub,
      async dispose() {
        await queue[Symbol.asyncDispose]();
        await kv[Symbol.asyncDispose]();
        await pubsub[Symbol.asyncDispose]();
      },
    };
  },
  async cleanup(namespace) {
    const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
    try {
      const tables = await sql<{ tablename: string }[]>`
        SELECT tablename FROM pg_tables WHERE tablename LIKE ${tableNameFor(namespace) + "%"}`;
      for (const { tablename } of tables) {
        await sql.unsafe(`DROP TABLE IF EXISTS "${tablename}"`);
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
});

test("PostgresPubSub delivers across clients and unlistens on abort", async () => {
  const prefix = `t${crypto.randomUUID().slice(0, 8)}:`;
  await using publisher = new PostgresPubSub(POSTGRES_URL, { prefix });
  await using subscriber = new PostgresPubSub(POSTGRES_URL, { prefix });
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
  assertEquals(subscriber.subscriptionCount, 2);
  await publisher.publish("news", "one");
  await publisher.publish("news", "two");
  await within(two, "two payloads");
  assertEquals(received, ["one", "two"]);
  controller.abort();
  assertEquals(subscriber.subscriptionCount, 0);
  await assertRejects(() => publisher.publish("x".repeat(64), "too long"), RangeError, "63");
});
