// Key rates on the memory store; on real stores they run through
// @fedwork/testing's testTaskLimits().
import { assert, assertEquals, assertThrows, test } from "@fedify/fixture";
import type { KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { createKeyRate } from "./key-rate.ts";

test("createKeyRate spreads starts one interval apart, in the order reserved", async () => {
  // A clock moved by hand: 2 ms pass between reservations, however fast
  // or slow the machine is.  The store's TTLs stay on real time, so the
  // interval is a minute: no entry can expire between two reservations.
  let clock = 1_000_000;
  const rate = createKeyRate(new MemoryKvStore(), ["t", "rate"], () => clock);
  const reservations = [];
  for (let i = 0; i < 10; i++) {
    reservations.push(await rate.reserve("a", 2, 120_000));
    clock += 2;
  }
  assertEquals(reservations[0].waitMs, 0);
  for (let i = 1; i < reservations.length; i++) {
    // Exactly a minute apart: a reservation is the previous one plus
    // 120 s / 2.
    assertEquals(reservations[i].startAt - reservations[i - 1].startAt, 60_000);
  }
  // The tenth starts nine minutes after the first, 18 ms of which have passed.
  assertEquals(reservations[9].waitMs, 9 * 60_000 - 18);
});

test("createKeyRate keeps every window of a period within the limit under concurrency", async () => {
  const rate = createKeyRate(new MemoryKvStore(), ["t"]);
  const starts = (await Promise.all(
    Array.from({ length: 40 }, () => rate.reserve("a", 4, 1000)),
  )).map((reservation) => reservation.startAt).sort((a, b) => a - b);
  assertEquals(new Set(starts).size, 40);
  for (let i = 4; i < starts.length; i++) assert(starts[i] - starts[i - 4] >= 1000);
});

test("createKeyRate does not slow other keys, and starts at once after an idle period", async () => {
  let clock = 1_000_000;
  const rate = createKeyRate(new MemoryKvStore(), ["t"], () => clock);
  await rate.reserve("a", 1, 60_000);
  assertEquals((await rate.reserve("a", 1, 60_000)).waitMs, 60_000);
  assertEquals((await rate.reserve("b", 1, 60_000)).waitMs, 0);
  await rate.reserve("c", 10, 200); // one every 20 ms
  clock += 40;
  assertEquals((await rate.reserve("c", 10, 200)).waitMs, 0);
});

test("createKeyRate refuses a store without cas()", () => {
  const store = new MemoryKvStore();
  const withoutCas: KvStore = {
    get: (key) => store.get(key),
    set: () => Promise.resolve(),
    delete: () => Promise.resolve(),
    list: () => (async function* () {})(),
  };
  assertThrows(() => createKeyRate(withoutCas, ["t"]), TypeError, "cas()");
});
