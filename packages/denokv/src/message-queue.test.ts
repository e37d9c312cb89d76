import {
  assertEquals,
  assertRejects,
  assertThrows,
  deferred,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import type { MessageRedelivery } from "@fedwork/core";
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

/** Runs `body` with a fresh database file, removed afterwards. */
async function withDatabase(body: (path: string) => Promise<void>): Promise<void> {
  const namespace = `fedwork-denokv-queue-test-${crypto.randomUUID()}`;
  try {
    await body(databasePath(namespace));
  } finally {
    await cleanup(namespace);
  }
}

test("DenoKvMessageQueue counts hand-outs in deliveryCount until redeliver() resets the count", async () => {
  await withDatabase(async (path) => {
    const opened = await openKvFile(path);
    try {
      // A handed-back message waits one lease.
      await using queue = new DenoKvMessageQueue({
        kv: opened.kv,
        leaseTime: { milliseconds: 300 },
      });
      const controller = new AbortController();
      const counts: (number | undefined)[] = [];
      const done = deferred();
      const listening = queue.listen(async (message: string, redelivery?: MessageRedelivery) => {
        counts.push(redelivery?.deliveryCount);
        if (message === "v1" && counts.length < 3) throw new Error("Failing on purpose.");
        if (message === "v1") {
          await redelivery!.redeliver("v2", { delay: { milliseconds: 0 } });
          return;
        }
        done.resolve();
      }, { signal: controller.signal });
      await queue.enqueue("v1", { orderingKey: "k" });
      await within(done.promise, "the redelivered version");
      controller.abort();
      await within(listening, "listen() to resolve");
      // Thrown twice (1, 2: a failure is no outcome), redelivered on the
      // third (3), and the new version counts from 1 again.
      assertEquals(counts, [1, 2, 3, 1]);
    } finally {
      opened.close();
    }
  });
});

test("DenoKvMessageQueue keeps the delivery count of a message whose worker died", async () => {
  await withDatabase(async (path) => {
    const deadKv = await openKvFile(path);
    const liveKv = await openKvFile(path);
    const gate = deferred();
    try {
      const options = { leaseTime: { milliseconds: 300 }, pollInterval: { milliseconds: 50 } };
      const dead = new DenoKvMessageQueue({ kv: deadKv.kv, ...options });
      await using live = new DenoKvMessageQueue({ kv: liveKv.kv, ...options });
      const deadController = new AbortController();
      const started = deferred<number | undefined>();
      const deadListening = dead.listen(async (_: unknown, redelivery?: MessageRedelivery) => {
        started.resolve(redelivery?.deliveryCount);
        await gate.promise;
      }, { signal: deadController.signal });
      await dead.enqueue("poison");
      assertEquals(await within(started.promise, "the first hand-out"), 1);
      // The worker loses its database mid-handler: no heartbeat, no
      // outcome, its lease runs out (as when the process is killed).
      deadKv.close();
      const controller = new AbortController();
      const seen = deferred<number | undefined>();
      const listening = live.listen((_: unknown, redelivery?: MessageRedelivery) => {
        seen.resolve(redelivery?.deliveryCount);
      }, { signal: controller.signal });
      assertEquals(await within(seen.promise, "the message on the live worker"), 2);
      controller.abort();
      await within(listening, "listen() to resolve");
      deadController.abort();
      gate.resolve();
      await within(deadListening.catch(() => {}), "the dead listener to stop");
    } finally {
      gate.resolve();
      deadKv.close();
      liveKv.close();
    }
  });
});

test("DenoKvMessageQueue does not count prefetched messages released when a listener stops", async () => {
  await withDatabase(async (path) => {
    const opened = await openKvFile(path);
    try {
      await using queue = new DenoKvMessageQueue({ kv: opened.kv, concurrency: 1, prefetch: 2 });
      await queue.enqueueMany(["a", "b", "c"]);
      const first = new AbortController();
      const started = deferred();
      const gate = deferred();
      const firstListening = queue.listen(async () => {
        started.resolve();
        await gate.promise;
      }, { signal: first.signal });
      await within(started.promise, "the first handler");
      // One claim took all three: "b" and "c" wait prefetched.
      await waitUntil(async () => (await queue.getDepth()).ready === 0, {
        what: "the prefetch claim",
      });
      first.abort();
      gate.resolve();
      await within(firstListening, "the first listener to stop");
      const second = new AbortController();
      const counts: [string, number | undefined][] = [];
      const done = deferred();
      const listening = queue.listen((message: string, redelivery?: MessageRedelivery) => {
        counts.push([message, redelivery?.deliveryCount]);
        if (counts.length === 2) done.resolve();
      }, { signal: second.signal });
      await within(done.promise, "the released messages");
      second.abort();
      await within(listening, "listen() to resolve");
      assertEquals(counts, [["b", 1], ["c", 1]]);
    } finally {
      opened.close();
    }
  });
});
