// What the operator's dashboard reads from a federation: queue depths per
// role and queue, and per-minute throughput counters shared through the
// key–value store.
import { assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { z } from "zod";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { PermanentError } from "../../processing/errors.ts";
import type { ThroughputBucket } from "../../processing/throughput.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";

const base = new URL("https://web.example/");
const empty = z.object({});

function totals(buckets: readonly ThroughputBucket[]) {
  const sum = { completed: 0, failed: 0, retried: 0, dropped: 0 };
  for (const bucket of buckets) {
    sum.completed += bucket.completed;
    sum.failed += bucket.failed;
    sum.retried += bucket.retried;
    sum.dropped += bucket.dropped;
  }
  return sum;
}

function worker(federation: Federation<void>) {
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  return {
    async stop() {
      controller.abort();
      await running;
    },
  };
}

test("getThroughput() sums every worker's per-minute counts from the KV store", async () => {
  const kv = new MemoryKvStore();
  const queue = new InProcessMessageQueue();
  const options = {
    kv,
    queue: { task: queue },
    manuallyStartQueue: true,
    taskRetryPolicy: ({ attempts }: { attempts: number }) =>
      attempts < 2 ? millisecondsToDuration(1) : null,
  };
  const a = createFederation<void>(options);
  const b = createFederation<void>(options);
  let attempts = 0;
  const handles = [a, b].map((federation) => ({
    ok: federation.defineTask("ok", { schema: empty, handler() {} }),
    flaky: federation.defineTask("flaky", {
      schema: empty,
      handler() {
        if (attempts++ === 0) throw new Error("once");
      },
    }),
    broken: federation.defineTask("broken", {
      schema: empty,
      handler() {
        throw new PermanentError("never");
      },
    }),
  }));
  const { ok, flaky, broken } = handles[0];
  const done = deferred();
  let finished = 0;
  for (const type of ["completed", "failed"] as const) {
    a.on(type, () => {
      if (++finished === 4) done.resolve();
    });
  }
  const ctx = a.createContext(base, undefined);
  await ctx.enqueueTask(ok, {});
  const running = worker(a);
  try {
    await ctx.enqueueTask(ok, {});
    await ctx.enqueueTask(flaky, {});
    await ctx.enqueueTask(broken, {});
    await within(done.promise, "four finished tasks");
    // The worker's own process sees its counts before they are written.
    const own = await a.getThroughput({ minutes: 5 });
    assertEquals(own.length, 5);
    assertEquals(totals(own), { completed: 3, failed: 1, retried: 1, dropped: 0 });
  } finally {
    // Stopping the worker writes its counts for the other processes.
    await running.stop();
  }
  const buckets = await b.getThroughput();
  assertEquals(buckets.length, 60);
  assertEquals(totals(buckets), { completed: 3, failed: 1, retried: 1, dropped: 0 });
  for (let i = 1; i < buckets.length; i++) {
    assertEquals(buckets[i].minute.getTime() - buckets[i - 1].minute.getTime(), 60_000);
  }
  assertEquals(buckets.at(-1)!.minute.getTime() % 60_000, 0);
  assertEquals(buckets.at(-1)!.minute.getTime() <= Date.now(), true);
  for (const minutes of [0, 121, 1.5, Number.NaN]) {
    await assertRejects(() => b.getThroughput({ minutes }), RangeError, "minutes");
  }
});

test("getQueueDepths() asks each distinct queue once, per role and task queue", async () => {
  const shared = new InProcessMessageQueue();
  const tasks = new InProcessMessageQueue();
  const images = new InProcessMessageQueue();
  let asked = 0;
  const counting: MessageQueue = {
    enqueue: (message, options) => shared.enqueue(message, options),
    listen: (handler, options) => shared.listen(handler, options),
    async getDepth() {
      asked++;
      return await shared.getDepth();
    },
  };
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox: counting, outbox: counting, task: tasks },
    manuallyStartQueue: true,
  });
  const resize = federation.defineTask("resize", { schema: empty, queue: images, handler() {} });
  const thumbnail = federation.defineTask("thumbnail", {
    schema: empty,
    queue: images,
    handler() {},
  });
  const digest = federation.defineTask("digest", { schema: empty, handler() {} });
  const ctx = federation.createContext(base, undefined);
  await ctx.enqueueTask(resize, {});
  await ctx.enqueueTask(thumbnail, {});
  await ctx.enqueueTask(thumbnail, {}, { delay: { hours: 1 } });
  await ctx.enqueueTask(digest, {});
  assertEquals(await federation.getQueueDepths(), [
    { role: "inbox", queue: "inbox+outbox", depth: { queued: 0, ready: 0, delayed: 0 } },
    { role: "outbox", queue: "inbox+outbox", depth: { queued: 0, ready: 0, delayed: 0 } },
    { role: "task", queue: "task", depth: { queued: 1, ready: 1, delayed: 0 } },
    {
      role: "task",
      queue: "task:resize,thumbnail",
      depth: { queued: 3, ready: 2, delayed: 1 },
    },
  ]);
  assertEquals(asked, 1);
  // A task needing capabilities waits in its capability set's queue.
  const render = federation.defineTask("render", {
    schema: empty,
    capabilities: ["gpu"],
    handler() {},
  });
  await ctx.enqueueTask(render, {});
  assertEquals((await federation.getQueueDepths()).at(-1), {
    role: "task",
    queue: "task:render (needs gpu)",
    depth: { queued: 1, ready: 1, delayed: 0 },
  });
  // A queue without getDepth() is listed with an unknown depth.
  const bare = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { outbox: { enqueue: () => Promise.resolve(), listen: () => Promise.resolve() } },
    manuallyStartQueue: true,
  });
  assertEquals(await bare.getQueueDepths(), [
    { role: "outbox", queue: "outbox+task", depth: undefined },
    { role: "task", queue: "outbox+task", depth: undefined },
  ]);
});
