import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import type { DenoKv } from "./deno-kv.ts";
import { DenoKvMessageQueue } from "./message-queue.ts";
import { cleanup, databasePath, openKvFile } from "./testdata/conformance-factory.ts";

const fakeKv = { get() {}, list() {}, atomic() {} } as unknown as DenoKv;

test("DenoKvMessageQueue rejects invalid options naming the option", () => {
  // @ts-expect-error: kv is required.
  assertThrows(() => new DenoKvMessageQueue({}), TypeError, "kv");
  assertThrows(
    () => new DenoKvMessageQueue({ kv: fakeKv, prefix: ["a", 1 as unknown as string] }),
    TypeError,
    "prefix",
  );
  assertThrows(
    () => new DenoKvMessageQueue({ kv: fakeKv, leaseTime: { seconds: -1 } }),
    RangeError,
    "leaseTime",
  );
  assertThrows(
    // @ts-expect-error: a misspelt option.
    () => new DenoKvMessageQueue({ kv: fakeKv, concurency: 2 }),
    TypeError,
    "concurrency",
  );
});

test("DenoKvMessageQueue refuses a priority, having no nativePriority", async () => {
  const queue = new DenoKvMessageQueue({ kv: fakeKv });
  assertEquals(queue.nativePriority, false);
  await assertRejects(() => queue.enqueue({}, { priority: 2 }), RangeError, "priority");
});

test("DenoKvMessageQueue keeps queues with different prefixes apart", async () => {
  const namespace = `fedwork-denokv-queue-test-${crypto.randomUUID()}`;
  const opened = await openKvFile(databasePath(namespace));
  try {
    await using first = new DenoKvMessageQueue({ kv: opened.kv, prefix: ["first"] });
    await using second = new DenoKvMessageQueue({ kv: opened.kv, prefix: ["second"] });
    await first.enqueue({ to: "first" });
    await first.enqueue({ to: "first" }, { delay: { hours: 1 } });
    assertEquals(await first.getDepth(), { queued: 2, ready: 1, delayed: 1 });
    assertEquals(await second.getDepth(), { queued: 0, ready: 0, delayed: 0 });
  } finally {
    opened.close();
    await cleanup(namespace);
  }
});

test("DenoKvMessageQueue enqueues more messages than one Deno KV atomic operation holds", async () => {
  const namespace = `fedwork-denokv-queue-test-${crypto.randomUUID()}`;
  const opened = await openKvFile(databasePath(namespace));
  try {
    await using queue = new DenoKvMessageQueue({ kv: opened.kv, concurrency: 4 });
    const count = 1_200;
    await queue.enqueueMany(Array.from({ length: count }, (_, index) => ({ index })));
    assertEquals((await queue.getDepth()).queued, count);
    const seen: number[] = [];
    const controller = new AbortController();
    let allSeen!: () => void;
    const all = new Promise<void>((resolve) => allSeen = resolve);
    const listening = queue.listen((message: { index: number }) => {
      seen.push(message.index);
      if (seen.length === count) allSeen();
    }, { signal: controller.signal });
    await all;
    controller.abort();
    await listening;
    assertEquals(new Set(seen).size, count);
    assertEquals((await queue.getDepth()).queued, 0);
  } finally {
    opened.close();
    await cleanup(namespace);
  }
});
