import { assertEquals, assertRejects, test } from "@fedify/fixture";
import { CachedKvRead } from "./cached-read.ts";
import type { KvKey, KvStore } from "./kv-store.ts";
import { MemoryKvStore } from "./memory-kv-store.ts";

/** A store whose reads of one key wait until the test answers them. */
function heldStore(): {
  kv: KvStore;
  reads: { key: KvKey; answer(value: unknown): void; fail(error: Error): void }[];
} {
  const reads: { key: KvKey; answer(value: unknown): void; fail(error: Error): void }[] = [];
  const kv = new MemoryKvStore();
  const store: KvStore = {
    get: <T = unknown>(key: KvKey) =>
      new Promise<T | undefined>((resolve, reject) => {
        reads.push({ key, answer: (value) => resolve(value as T), fail: reject });
      }),
    set: (key, value, options) => kv.set(key, value, options),
    delete: (key) => kv.delete(key),
    list: (prefix) => kv.list(prefix),
  };
  return { kv: store, reads };
}

const KEY: KvKey = ["test", "cached"];

test("CachedKvRead shares one read among the uses meanwhile and trusts it for maxAgeMs from when it was sent", async () => {
  const { kv, reads } = heldStore();
  let now = 1000;
  const read = new CachedKvRead(kv, KEY, (value) => value ?? "absent", {
    maxAgeMs: 100,
    now: () => now,
  });
  const first = read.get();
  const second = read.get();
  assertEquals(first, second);
  assertEquals(reads.length, 1);
  assertEquals(reads[0].key, KEY);
  now = 1050;
  reads[0].answer(undefined);
  assertEquals(await first, "absent");
  // Sent at 1000: trusted until 1100, however late its answer came.
  now = 1099;
  assertEquals(read.get(), "absent");
  now = 1100;
  const third = read.get();
  assertEquals(third instanceof Promise, true);
  assertEquals(reads.length, 2);
  reads[1].answer("there");
  assertEquals(await third, "there");
  assertEquals(read.get(), "there");
});

test("CachedKvRead keeps a newer reading over an older read that answers late", async () => {
  const { kv, reads } = heldStore();
  let now = 0;
  const read = new CachedKvRead(kv, KEY, (value) => value != null, {
    maxAgeMs: 100,
    now: () => now,
  });
  const pending = read.get();
  now = 10;
  read.note(true);
  reads[0].answer(undefined);
  // The read itself answers what the store said...
  assertEquals(await pending, false);
  // ...but what was noted after it was sent is what is kept.
  assertEquals(read.get(), true);
});

test("CachedKvRead asks replacesOnTie about a reading of the same instant", () => {
  const { kv } = heldStore();
  const read = new CachedKvRead(kv, KEY, (value) => value != null, {
    maxAgeMs: 100,
    now: () => 5,
    replacesOnTie: (kept, incoming) => incoming || !kept,
  });
  read.note(true);
  read.note(false);
  assertEquals(read.get(), true);
  const plain = new CachedKvRead(kv, KEY, (value) => value != null, {
    maxAgeMs: 100,
    now: () => 5,
  });
  plain.note(true);
  plain.note(false);
  assertEquals(plain.get(), false);
});

test("CachedKvRead reports a failed read once, rejects its uses, and reads again next time", async () => {
  const { kv, reads } = heldStore();
  const errors: unknown[] = [];
  const read = new CachedKvRead(kv, KEY, (value) => value, {
    maxAgeMs: 100,
    now: () => 0,
    onError: (error) => errors.push(error),
  });
  const first = read.get() as Promise<unknown>;
  const second = read.get() as Promise<unknown>;
  const failure = new Error("store down");
  reads[0].fail(failure);
  await assertRejects(() => first, Error, "store down");
  await assertRejects(() => second, Error, "store down");
  assertEquals(errors, [failure]);
  const again = read.get();
  assertEquals(reads.length, 2);
  reads[1].answer(7);
  assertEquals(await again, 7);
});

test("CachedKvRead turns a store that throws at once into a rejected read", async () => {
  const errors: unknown[] = [];
  const kv = {
    get: () => {
      throw new Error("thrown at once");
    },
  } as unknown as KvStore;
  const read = new CachedKvRead(kv, KEY, (value) => value, {
    maxAgeMs: 100,
    onError: (error) => errors.push(error),
  });
  await assertRejects(() => read.get() as Promise<unknown>, Error, "thrown at once");
  assertEquals(errors.length, 1);
});
