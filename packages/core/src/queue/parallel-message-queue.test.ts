import {
  assert,
  assertEquals,
  assertFalse,
  assertStrictEquals,
  assertThrows,
  deferred,
  test,
  within,
} from "@fedify/fixture";
import { InProcessMessageQueue } from "./in-process-message-queue.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "./message-queue.ts";
import { ParallelMessageQueue } from "./parallel-message-queue.ts";

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

test("ParallelMessageQueue runs up to `workers` handlers at the same time", async () => {
  await using queue = new ParallelMessageQueue(new InProcessMessageQueue(), 4);
  const controller = new AbortController();
  let running = 0;
  let maxRunning = 0;
  let handled = 0;
  const fourRunning = deferred();
  const allHandled = deferred();
  const listening = queue.listen(async () => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    if (running === 4) fourRunning.resolve();
    // The first handlers only finish once four of them run together.
    await fourRunning.promise;
    await nextMacrotask();
    running--;
    if (++handled === 12) allHandled.resolve();
  }, { signal: controller.signal });
  await queue.enqueueMany(Array.from({ length: 12 }, (_, i) => ({ n: i })));
  await within(fourRunning.promise, "four handlers to run at once");
  await within(allHandled.promise, "every message");
  assertEquals(maxRunning, 4);
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("ParallelMessageQueue never overlaps messages with the same orderingKey", async () => {
  await using queue = new ParallelMessageQueue(new InProcessMessageQueue(), 4);
  const controller = new AbortController();
  const runningByKey = new Map<string, number>();
  let overlaps = 0;
  let running = 0;
  let maxRunning = 0;
  const order: Record<string, number[]> = { a: [], b: [] };
  let handled = 0;
  const done = deferred();
  const listening = queue.listen(async (message: { orderingKey: string; n: number }) => {
    const key = message.orderingKey;
    runningByKey.set(key, (runningByKey.get(key) ?? 0) + 1);
    if (runningByKey.get(key)! > 1) overlaps++;
    running++;
    maxRunning = Math.max(maxRunning, running);
    await nextMacrotask();
    await nextMacrotask();
    order[key].push(message.n);
    running--;
    runningByKey.set(key, runningByKey.get(key)! - 1);
    if (++handled === 20) done.resolve();
  }, { signal: controller.signal });
  const messages = Array.from({ length: 20 }, (_, n) => ({ orderingKey: n % 2 ? "a" : "b", n }));
  await queue.enqueueMany(messages);
  await within(done.promise, "every message");
  assertEquals(overlaps, 0);
  assertEquals(order.a, messages.filter((m) => m.orderingKey === "a").map((m) => m.n));
  assertEquals(order.b, messages.filter((m) => m.orderingKey === "b").map((m) => m.n));
  // The two keys still ran side by side.
  assertEquals(maxRunning, 2);
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("ParallelMessageQueue rejects a workers count that is not a positive integer", () => {
  const inner = new InProcessMessageQueue();
  for (const workers of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    assertThrows(() => new ParallelMessageQueue(inner, workers), RangeError, "workers");
  }
  assertThrows(
    () => new ParallelMessageQueue(inner, "4" as unknown as number),
    TypeError,
    "workers",
  );
});

test("ParallelMessageQueue listen() waits for every running handler after the signal aborts", async () => {
  await using queue = new ParallelMessageQueue(new InProcessMessageQueue(), 3);
  const controller = new AbortController();
  const release = deferred();
  let started = 0;
  let finished = 0;
  const threeStarted = deferred();
  const listening = queue.listen(async () => {
    if (++started === 3) threeStarted.resolve();
    await release.promise;
    finished++;
  }, { signal: controller.signal });
  let listenResolved = false;
  const observed = listening.then(() => {
    listenResolved = true;
    return finished;
  });
  await queue.enqueueMany([1, 2, 3]);
  await within(threeStarted.promise, "three handlers to start");
  controller.abort();
  await nextMacrotask();
  assertFalse(listenResolved, "listen() resolved while handlers were running");
  release.resolve();
  assertEquals(await within(observed, "listen() to resolve"), 3);
});

test("ParallelMessageQueue keeps listening after a handler throws", async () => {
  await using queue = new ParallelMessageQueue(new InProcessMessageQueue(), 2);
  const controller = new AbortController();
  const done = deferred();
  const listening = queue.listen((message: string) => {
    if (message === "bad") throw new Error("thrown on purpose");
    done.resolve();
  }, { signal: controller.signal });
  await queue.enqueue("bad");
  await queue.enqueue("good");
  await within(done.promise, "the message after the failure");
  controller.abort();
  await within(listening, "listen() to resolve");
});

test("ParallelMessageQueue delegates enqueueing and getDepth() to the inner queue", async () => {
  await using inner = new InProcessMessageQueue();
  const queue = new ParallelMessageQueue(inner, 2);
  await queue.enqueue("a");
  await queue.enqueueMany(["b", "c"], { delay: { hours: 1 } });
  assertEquals(await inner.getDepth(), { queued: 3, ready: 1, delayed: 2 });
  assert(queue.getDepth != null);
  assertEquals(await queue.getDepth(), { queued: 3, ready: 1, delayed: 2 });
  assertFalse(queue.nativeRetrial);
  assertStrictEquals(queue.queue, inner);
  assertStrictEquals(queue.workers, 2);
});

test("ParallelMessageQueue mirrors the inner queue's nativeRetrial and missing getDepth()", async () => {
  const enqueued: [unknown, MessageQueueEnqueueOptions | undefined][] = [];
  // A minimal queue with native retrial, no enqueueMany() and no getDepth().
  const inner: MessageQueue = {
    nativeRetrial: true,
    enqueue(message, options) {
      enqueued.push([message, options]);
      return Promise.resolve();
    },
    listen: () => Promise.resolve(),
  };
  const queue = new ParallelMessageQueue(inner, 1);
  assert(queue.nativeRetrial);
  assertStrictEquals(queue.getDepth, undefined);
  await queue.enqueueMany([1, 2, 3], { orderingKey: "k" });
  assertEquals(enqueued, [[1, { orderingKey: "k" }], [2, { orderingKey: "k" }], [3, {
    orderingKey: "k",
  }]]);
  await queue[Symbol.asyncDispose]();
});

test("ParallelMessageQueue lets the inner queue see a message settle only after its handler", async () => {
  // An inner queue that hands one message to each listen() call and records
  // what its handler's promise did, as a durable queue acknowledging (or
  // retrying natively) would.
  const outcomes: string[] = [];
  const settled = deferred();
  const inner: MessageQueue = {
    nativeRetrial: true,
    enqueue: () => Promise.resolve(),
    async listen(handler) {
      const message = outcomes.length === 0 && !("taken" in inner) ? "bad" : "good";
      Object.assign(inner, { taken: true });
      try {
        await handler(message);
        outcomes.push(`${message}: acknowledged`);
      } catch (error) {
        outcomes.push(`${message}: failed with ${(error as Error).message}`);
      }
      if (outcomes.length === 2) settled.resolve();
    },
  };
  const finished: string[] = [];
  const queue = new ParallelMessageQueue(inner, 2);
  await queue.listen(async (message: string) => {
    await nextMacrotask();
    finished.push(message);
    if (message === "bad") throw new Error("handler failed");
  });
  await within(settled.promise, "both messages to settle");
  assertEquals(finished.sort(), ["bad", "good"]);
  assertEquals(outcomes.sort(), ["bad: failed with handler failed", "good: acknowledged"]);
});
