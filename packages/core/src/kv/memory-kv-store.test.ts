import {
  assert,
  assertEquals,
  assertFalse,
  assertRejects,
  assertStrictEquals,
  test,
} from "@fedify/fixture";
import type { KvKey, KvStoreListEntry } from "./kv-store.ts";
import { isInMemoryKvStore, MemoryKvStore } from "./memory-kv-store.ts";

const TIMEOUT_MS = 30_000;

/** Polls `condition` until it holds, failing after a generous timeout. */
async function eventually(
  condition: () => boolean | Promise<boolean>,
  what: string,
): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (!await condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function collect(iterable: AsyncIterable<KvStoreListEntry>): Promise<KvStoreListEntry[]> {
  const entries: KvStoreListEntry[] = [];
  for await (const entry of iterable) entries.push(entry);
  return entries;
}

test("MemoryKvStore returns what was set and undefined for absent keys", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["a", "b"], { n: 1, list: [1, "two", null] });
  assertEquals(await kv.get(["a", "b"]), { n: 1, list: [1, "two", null] });
  assertStrictEquals(await kv.get(["a"]), undefined);
  assertStrictEquals(await kv.get(["a", "b", "c"]), undefined);
  await kv.set(["a", "b"], "replaced");
  assertEquals(await kv.get(["a", "b"]), "replaced");
});

test("MemoryKvStore delete removes an entry and ignores absent keys", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["x"], 1);
  await kv.delete(["x"]);
  assertStrictEquals(await kv.get(["x"]), undefined);
  await kv.delete(["never", "set"]);
});

test("MemoryKvStore stores copies that callers cannot mutate", async () => {
  await using kv = new MemoryKvStore();
  const value = { tags: ["a"] };
  await kv.set(["k"], value);
  value.tags.push("changed after set");
  const read = await kv.get<{ tags: string[] }>(["k"]);
  assertEquals(read, { tags: ["a"] });
  read!.tags.push("changed after get");
  assertEquals(await kv.get(["k"]), { tags: ["a"] });
  for await (const entry of kv.list(["k"])) (entry.value as { tags: string[] }).tags.length = 0;
  assertEquals(await kv.get(["k"]), { tags: ["a"] });
});

test("MemoryKvStore treats writing undefined as removing the entry", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["k"], 1);
  await kv.set(["k"], undefined);
  assertEquals(await collect(kv.list()), []);
});

test("MemoryKvStore stops returning an entry once its TTL has passed", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["short"], "gone soon", { ttl: { milliseconds: 50 } });
  await kv.set(["long"], "stays", { ttl: { hours: 1 } });
  await kv.set(["forever"], "stays");
  await eventually(async () => await kv.get(["short"]) === undefined, "the entry to expire");
  assertEquals(await kv.get(["long"]), "stays");
  assertEquals(await kv.get(["forever"]), "stays");
});

test("MemoryKvStore does not list expired entries", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["p", "short"], 1, { ttl: { milliseconds: 50 } });
  await kv.set(["p", "long"], 2, { ttl: { hours: 1 } });
  await eventually(
    async () => (await collect(kv.list(["p"]))).length === 1,
    "the entry to drop out of the listing",
  );
  assertEquals(await collect(kv.list(["p"])), [{ key: ["p", "long"], value: 2 }]);
});

test("MemoryKvStore set without a TTL makes an entry live forever again", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["k"], 1, { ttl: { milliseconds: 1 } });
  await kv.set(["k"], 2);
  // Poll long enough that the first TTL has surely passed.
  const start = performance.now();
  await eventually(() => performance.now() - start > 20, "20 ms to pass");
  assertEquals(await kv.get(["k"]), 2);
});

test("MemoryKvStore rejects a negative TTL naming the ttl option", async () => {
  await using kv = new MemoryKvStore();
  await assertRejects(() => kv.set(["k"], 1, { ttl: { seconds: -1 } }), RangeError, "ttl");
  assertStrictEquals(await kv.get(["k"]), undefined);
});

test("MemoryKvStore rejects keys that are not non-empty arrays of strings", async () => {
  await using kv = new MemoryKvStore();
  for (const key of [[], "k", [1], null]) {
    await assertRejects(() => kv.get(key as unknown as KvKey), TypeError, "non-empty array");
    await assertRejects(() => kv.set(key as unknown as KvKey, 1), TypeError, "non-empty array");
  }
});

test("MemoryKvStore lists entries by key-element prefix, sorted by key", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["a", "y"], 2);
  await kv.set(["ab"], "not under a");
  await kv.set(["a", "x", "deep"], 3);
  await kv.set(["a"], 1);
  await kv.set(["a", "x"], 4);
  await kv.set(["b"], 5);
  assertEquals(await collect(kv.list(["a"])), [
    { key: ["a"], value: 1 },
    { key: ["a", "x"], value: 4 },
    { key: ["a", "x", "deep"], value: 3 },
    { key: ["a", "y"], value: 2 },
  ]);
  assertEquals((await collect(kv.list(["a", "x"]))).map((e) => e.key), [
    ["a", "x"],
    ["a", "x", "deep"],
  ]);
  assertEquals(await collect(kv.list(["zzz"])), []);
  assertEquals((await collect(kv.list())).map((e) => e.key), [
    ["a"],
    ["a", "x"],
    ["a", "x", "deep"],
    ["a", "y"],
    ["ab"],
    ["b"],
  ]);
});

test("MemoryKvStore cas swaps only when the current value deeply equals the expected one", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["k"], { a: 1, b: [1, 2, { c: "x" }] });
  assertFalse(await kv.cas(["k"], { a: 1, b: [1, 2, { c: "y" }] }, "wrong"));
  assertFalse(await kv.cas(["k"], { a: 1 }, "wrong"));
  assertFalse(await kv.cas(["k"], undefined, "wrong"));
  assertEquals(await kv.get(["k"]), { a: 1, b: [1, 2, { c: "x" }] });
  // Key order does not matter, as in JSON.
  assert(await kv.cas(["k"], { b: [1, 2, { c: "x" }], a: 1 }, "swapped"));
  assertEquals(await kv.get(["k"]), "swapped");
});

test("MemoryKvStore cas treats undefined as absent", async () => {
  await using kv = new MemoryKvStore();
  assert(await kv.cas(["k"], undefined, 1));
  assertEquals(await kv.get(["k"]), 1);
  assertFalse(await kv.cas(["k"], undefined, 2));
  assertFalse(await kv.cas(["other"], null, 2));
  assert(await kv.cas(["k"], 1, undefined));
  assertStrictEquals(await kv.get(["k"]), undefined);
});

test("MemoryKvStore cas distinguishes values JSON tells apart", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["k"], [1, 2]);
  assertFalse(await kv.cas(["k"], { 0: 1, 1: 2 }, "x"));
  assertFalse(await kv.cas(["k"], [1, 2, 3], "x"));
  assertFalse(await kv.cas(["k"], ["1", "2"], "x"));
  await kv.set(["n"], null);
  assertFalse(await kv.cas(["n"], undefined, "x"));
  assertFalse(await kv.cas(["n"], 0, "x"));
  assert(await kv.cas(["n"], null, "x"));
});

test("MemoryKvStore cas sees an expired entry as absent and applies the new TTL", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["k"], "old", { ttl: { milliseconds: 30 } });
  await eventually(async () => await kv.get(["k"]) === undefined, "the entry to expire");
  assert(await kv.cas(["k"], undefined, "new", { ttl: { milliseconds: 30 } }));
  assertEquals(await kv.get(["k"]), "new");
  await eventually(async () => await kv.get(["k"]) === undefined, "the new entry to expire");
});

test("MemoryKvStore cas lets exactly one of many concurrent writers win", async () => {
  await using kv = new MemoryKvStore();
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => kv.cas(["lock"], undefined, `owner-${i}`)),
  );
  assertEquals(results.filter((won) => won).length, 1);
  assertEquals(await kv.get(["lock"]), `owner-${results.indexOf(true)}`);
});

test("MemoryKvStore keeps the entries under a key whose own entry is deleted", async () => {
  await using kv = new MemoryKvStore();
  await kv.set(["a"], 1);
  await kv.set(["a", "x"], 2);
  await kv.set(["a", ""], 3);
  await kv.set(["a,b", '"q"'], 4);
  await kv.delete(["a"]);
  assertStrictEquals(await kv.get(["a"]), undefined);
  assertStrictEquals(await kv.get(["a", "x"]), 2);
  await kv.delete(["a", "x"]);
  await kv.delete(["a", "x", "never"]);
  assertEquals(await collect(kv.list()), [
    { key: ["a", ""], value: 3 },
    { key: ["a,b", '"q"'], value: 4 },
  ]);
  await kv.delete(["a", ""]);
  assertEquals(await collect(kv.list(["a"])), []);
  await kv.set(["a"], 5);
  assertEquals(await collect(kv.list(["a"])), [{ key: ["a"], value: 5 }]);
});

test("isInMemoryKvStore tells a MemoryKvStore from a subclass and from other stores", () => {
  class Wrapped extends MemoryKvStore {}
  assert(isInMemoryKvStore(new MemoryKvStore()));
  assertFalse(isInMemoryKvStore(new Wrapped()));
  const other = {
    get: () => Promise.resolve(undefined),
    set: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    list: () => new MemoryKvStore().list(),
  };
  assertFalse(isInMemoryKvStore(other));
});
