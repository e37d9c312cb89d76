import { assertEquals, test } from "@fedify/fixture";
import type { Temporal } from "@js-temporal/polyfill";
import type { KvKey, KvStore, KvStoreSetOptions } from "./kv-store.ts";
import { MemoryKvStore } from "./memory-kv-store.ts";
import { withTemporalTtl } from "./temporal-ttl.ts";

test("withTemporalTtl hands set() and cas() a Temporal.Duration whatever the TTL's form", async () => {
  const seen: unknown[] = [];
  const inner = new MemoryKvStore();
  const recording: KvStore = {
    get: (key) => inner.get(key),
    set(key: KvKey, value: unknown, options?: KvStoreSetOptions) {
      seen.push(options?.ttl);
      return inner.set(key, value, options);
    },
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
    cas(key, expected, value, options) {
      seen.push(options?.ttl);
      return inner.cas(key, expected, value, options);
    },
  };
  const store = withTemporalTtl(recording);
  await store.set(["a"], 1, { ttl: { hours: 1 } });
  await store.set(["b"], 2, { ttl: "PT1H" });
  assertEquals(await store.cas!(["c"], undefined, 3, { ttl: { minutes: 60 } }), true);
  await store.set(["d"], 4);
  assertEquals(seen.length, 4);
  for (const ttl of seen.slice(0, 3)) {
    assertEquals(Object.prototype.toString.call(ttl), "[object Temporal.Duration]");
    assertEquals((ttl as Temporal.Duration).total("minute"), 60);
  }
  assertEquals(seen[3], undefined);
  assertEquals(await store.get(["b"]), 2);
  const keys: KvKey[] = [];
  for await (const entry of store.list()) keys.push(entry.key);
  assertEquals(keys.length, 4);
  await store.delete(["a"]);
  assertEquals(await store.get(["a"]), undefined);
});

test("withTemporalTtl offers cas() only when the store has it", () => {
  const { cas: _, ...withoutCas } = {
    get: () => Promise.resolve(undefined),
    set: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    list: async function* () {},
    cas: () => Promise.resolve(true),
  };
  assertEquals(withTemporalTtl(withoutCas).cas, undefined);
  assertEquals(typeof withTemporalTtl(new MemoryKvStore()).cas, "function");
});

test("withTemporalTtl passes getMany() on when the store has it, and only then", async () => {
  const inner = new MemoryKvStore();
  await inner.set(["a"], 1);
  const store = withTemporalTtl(inner);
  assertEquals(await store.getMany!([["a"], ["b"], ["a"]]), [1, undefined, 1]);
  const bare = withTemporalTtl({
    get: (key) => inner.get(key),
    set: (key, value, options) => inner.set(key, value, options),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
  });
  assertEquals("getMany" in bare, false);
});

test("withTemporalTtl hands setMany() a Temporal.Duration for each entry's TTL", async () => {
  const seen: unknown[] = [];
  const inner = new MemoryKvStore();
  const store = withTemporalTtl({
    get: (key) => inner.get(key),
    set: (key, value, options) => inner.set(key, value, options),
    delete: (key) => inner.delete(key),
    list: (prefix) => inner.list(prefix),
    setMany(entries) {
      for (const entry of entries) seen.push(entry.options?.ttl);
      return inner.setMany(entries);
    },
  });
  await store.setMany!([
    { key: ["a"], value: 1, options: { ttl: { hours: 1 } } },
    { key: ["b"], value: 2 },
  ]);
  assertEquals(Object.prototype.toString.call(seen[0]), "[object Temporal.Duration]");
  assertEquals((seen[0] as Temporal.Duration).total("minute"), 60);
  assertEquals(seen[1], undefined);
  assertEquals([await store.get(["a"]), await store.get(["b"])], [1, 2]);
});

test("withTemporalTtl leaves a MemoryKvStore as it is: it takes a TTL in any form", async () => {
  const memory = new MemoryKvStore();
  assertEquals(withTemporalTtl(memory) === memory, true);
  await memory.set(["a"], 1, { ttl: "PT1H" });
  await memory.set(["b"], 2, { ttl: { minutes: 5 } });
  assertEquals(await memory.getMany([["a"], ["b"]]), [1, 2]);
  class Subclass extends MemoryKvStore {}
  const sub = new Subclass();
  assertEquals(withTemporalTtl(sub) === sub, false);
});
