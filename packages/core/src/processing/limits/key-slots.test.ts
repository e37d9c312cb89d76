// Key slots on the memory store; on real stores they run through
// @fedwork/testing's testTaskLimits().
import { assert, assertEquals, assertFalse, assertThrows, test } from "@fedify/fixture";
import type { KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createKeySlots } from "./key-slots.ts";

test("createKeySlots gives at most limit holders of one key a slot", async () => {
  const slots = createKeySlots(new MemoryKvStore(), ["t", "slots"]);
  const first = await slots.acquire("a", "h1", 2, 60_000);
  const second = await slots.acquire("a", "h2", 2, 60_000);
  const third = await slots.acquire("a", "h3", 2, 60_000);
  assert(first.acquired && second.acquired);
  assertFalse(third.acquired);
  if (!third.acquired) assert(third.retryAfterMs > 50_000 && third.retryAfterMs <= 60_000);
  // Another key is not blocked.
  assert((await slots.acquire("b", "h3", 2, 60_000)).acquired);
});

test("createKeySlots frees a released slot at once, and releasing twice does nothing", async () => {
  const slots = createKeySlots(new MemoryKvStore(), ["t"]);
  const first = await slots.acquire("a", "h1", 1, 60_000);
  assert(first.acquired);
  assertFalse((await slots.acquire("a", "h2", 1, 60_000)).acquired);
  await first.release();
  await first.release();
  const second = await slots.acquire("a", "h2", 1, 60_000);
  assert(second.acquired);
  // The double release did not free h2's slot.
  assertFalse((await slots.acquire("a", "h3", 1, 60_000)).acquired);
});

test("createKeySlots lets a lease that ran out count no more", async () => {
  // A clock moved by hand, so that a slow machine cannot run the lease out
  // early; the store's own TTLs stay on real time, a minute away.
  let clock = 1_000_000;
  const slots = createKeySlots(new MemoryKvStore(), ["t"], () => clock);
  const crashed = await slots.acquire("a", "h1", 1, 60_000);
  assert(crashed.acquired);
  clock += 10;
  const refused = await slots.acquire("a", "h2", 1, 60_000);
  assertFalse(refused.acquired);
  if (!refused.acquired) assertEquals(refused.retryAfterMs, 59_990);
  clock += 59_991;
  assert((await slots.acquire("a", "h2", 1, 60_000)).acquired);
  // The holder that lost its lease cannot renew into a full key.
  assertFalse(await crashed.renew());
});

test("createKeySlots renews a lease so that it outlives its first term", async () => {
  const slots = createKeySlots(new MemoryKvStore(), ["t"]);
  const slot = await slots.acquire("a", "h1", 1, 200);
  assert(slot.acquired);
  assert(await slot.renew());
  const refused = await slots.acquire("a", "h2", 1, 200);
  assertFalse(refused.acquired);
  // A holder acquiring again keeps its one slot.
  assert((await slots.acquire("a", "h1", 1, 200)).acquired);
  await slot.release();
  assert((await slots.acquire("a", "h2", 1, 200)).acquired);
});

test("createKeySlots lets exactly limit of many concurrent holders in", async () => {
  const slots = createKeySlots(new MemoryKvStore(), ["t"]);
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => slots.acquire("a", `h${i}`, 3, 60_000)),
  );
  assertEquals(results.filter((result) => result.acquired).length, 3);
});

test("createKeySlots leaves an empty entry that expires once every slot is released", async () => {
  const kv = new MemoryKvStore();
  const slots = createKeySlots(kv, ["t", "x"]);
  const slot = await slots.acquire("a", "h1", 2, 60_000);
  assert(slot.acquired);
  await slot.release();
  assertEquals(await kv.get(["t", "x", "a"]), { holders: [] });
});

test("createKeySlots refuses a store without cas()", () => {
  const store = new MemoryKvStore();
  const withoutCas: KvStore = {
    get: (key) => store.get(key),
    set: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    list: () => (async function* () {})(),
  };
  assertThrows(() => createKeySlots(withoutCas, ["t"]), TypeError, "cas()");
});
