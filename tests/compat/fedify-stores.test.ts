// Key–value stores written for Fedify under Fedwork.  Fedwork hands every
// store a TTL as a Temporal.Duration (see withTemporalTtl in
// @fedwork/core); these tests hand Fedify's stores TTLs the same way.
import { assertEquals, test, within } from "@fedify/fixture";
import { MemoryKvStore } from "@fedify/fedify";
import { PostgresKvStore } from "@fedify/postgres";
import { RedisKvStore } from "@fedify/redis";
import { createFederation, type KvStore, toTemporalDuration } from "@fedwork/core";
import { testKvStore } from "@fedwork/testing";
import { Redis } from "ioredis";
import postgres from "postgres";
import { createNamespace, POSTGRES_URL, REDIS_URL } from "./testdata/services.ts";

// Fedify 2's MemoryKvStore is a whole Fedwork KvStore (list() and cas()
// included): Fedwork's conformance suite runs against it as is, with TTLs
// given only as Temporal.Duration.
testKvStore({
  name: "@fedify/fedify MemoryKvStore",
  createStore: () => new MemoryKvStore(),
  durationInputs: false,
});

/**
 * The 1.8 Redis and PostgreSQL stores predate list(), so they are not
 * KvStores at the type level; at run time Fedwork needs get, set and delete.
 */
type LegacyFedifyStore = Pick<KvStore, "get" | "set" | "delete">;

async function checkTtl(store: LegacyFedifyStore): Promise<void> {
  // Accepted as a federation's store (no list() needed to start one).
  createFederation<void>({ kv: store as KvStore });
  await store.set(["compat", "short"], { n: 1 }, { ttl: toTemporalDuration({ seconds: 1 }) });
  await store.set(["compat", "long"], "stays", { ttl: toTemporalDuration("PT1H") });
  await store.set(["compat", "forever"], [1, 2]);
  const setAt = Date.now();
  const short = await store.get(["compat", "short"]);
  if (Date.now() - setAt < 900) assertEquals(short, { n: 1 });
  await within(
    (async () => {
      while (await store.get(["compat", "short"]) !== undefined) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })(),
    "the entry with a one-second TTL to expire",
  );
  assertEquals(await store.get(["compat", "long"]), "stays");
  assertEquals(await store.get(["compat", "forever"]), [1, 2]);
  await store.delete(["compat", "forever"]);
  assertEquals(await store.get(["compat", "forever"]), undefined);
}

test("@fedify/redis RedisKvStore expires an entry by a TTL Fedwork converted", async () => {
  const namespace = createNamespace();
  const redis = new Redis(REDIS_URL);
  try {
    await checkTtl(new RedisKvStore(redis, { keyPrefix: `${namespace}:` }));
  } finally {
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
});

test("@fedify/postgres PostgresKvStore expires an entry by a TTL Fedwork converted", async () => {
  const namespace = createNamespace();
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const store = new PostgresKvStore(sql, { tableName: namespace });
    await store.initialize();
    await checkTtl(store);
  } finally {
    await sql.unsafe(`DROP TABLE IF EXISTS "${namespace}"`);
    await sql.end({ timeout: 5 });
  }
});
