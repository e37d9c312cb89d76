// Worker presence through the federation: registration, heartbeats,
// busy/idle/offline, counts, events, and what it costs the store.
import {
  assert,
  assertEquals,
  assertRejects,
  deferred,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { KvKey, KvStore, KvStoreSetOptions } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { PermanentError } from "../../processing/errors.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { WorkerEvent } from "./types.ts";

/** A MemoryKvStore that counts the writes under `["fedwork", "worker"]` and can fail them. */
class CountingKvStore extends MemoryKvStore {
  workerWrites = 0;
  otherWrites = 0;
  failWorkerWrites = false;
  override async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    const isWorker = key[0] === "fedwork" && key[1] === "worker";
    if (isWorker && this.failWorkerWrites) throw new Error("the store is unreachable");
    if (isWorker) this.workerWrites++;
    else this.otherWrites++;
    await super.set(key, value, options);
  }
}

function federationOn(kv: KvStore, queue: InProcessMessageQueue): Federation<void> {
  return createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    taskRetryPolicy: () => null,
  });
}

test("listWorkers shows a worker's identity, its running task while busy, and its counts", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(new MemoryKvStore(), queue);
  const release = deferred();
  const started = deferred();
  const slow = federation.defineTask("slow", {
    schema: z.object({}),
    async handler() {
      started.resolve();
      await release.promise;
    },
  });
  const fail = federation.defineTask("fail", {
    schema: z.object({}),
    handler() {
      throw new PermanentError("no");
    },
  });
  const events: WorkerEvent[] = [];
  const controller = new AbortController();
  const ready = deferred();
  const worker = federation.startQueue(undefined, {
    signal: controller.signal,
    capabilities: ["gpu"],
    presence: { heartbeatInterval: { milliseconds: 100 } },
    onWorkerEvent: (event) => {
      events.push(event);
      if (event.type === "ready") ready.resolve();
    },
  });
  try {
    await within(ready.promise, "the worker to be ready");
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    const result = await ctx.enqueueTask(slow, {});
    const id = result.status === "enqueued" ? result.messageId : "";
    await within(started.promise, "the slow task to start");
    await waitUntil(async () => (await federation.listWorkers())[0]?.state === "busy", {
      what: "the worker to show busy",
    });
    const [busy] = await federation.listWorkers();
    assertEquals(busy.currentTaskIds, [id]);
    assertEquals(busy.capabilities, ["gpu"]);
    assertEquals(busy.pid, (await import("node:process")).default.pid);
    assert(busy.host !== "" && busy.runtime !== "", "host and runtime are set");
    // The task queue, and its sibling for the "gpu" capability.
    assert(busy.queues.length >= 1);
    assert(busy.queues.every((queue) => queue.type === "InProcessMessageQueue"));
    assertEquals(busy.heartbeatIntervalMs, 100);
    release.resolve();
    await ctx.enqueueTask(fail, {});
    await waitUntil(
      async () => {
        const [listed] = await federation.listWorkers();
        return listed?.state === "idle" && listed.counts.failed === 1;
      },
      { what: "the worker to show idle with one completed and one failed" },
    );
    const [idle] = await federation.listWorkers();
    assertEquals(idle.id, busy.id);
    assertEquals(idle.counts, { completed: 1, retried: 0, failed: 1, dropped: 0, cancelled: 0 });
    assertEquals(idle.currentTaskIds, []);
  } finally {
    release.resolve();
    controller.abort();
    await within(worker, "the worker to stop");
  }
  assertEquals(events.map((event) => event.type), ["ready", "stopping"]);
  assertEquals(events[1].worker.state, "stopping");
  assertEquals(await federation.listWorkers(), [], "a stopped worker is removed at once");
});

test("a worker whose heartbeats stop is shown offline, reported as an error, and removed later", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new CountingKvStore();
  const federation = federationOn(kv, queue);
  const errors: unknown[] = [];
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, {
    signal: controller.signal,
    presence: {
      heartbeatInterval: { milliseconds: 100 },
      offlineAfterMissedHeartbeats: 2,
      removeAfter: { milliseconds: 300 },
    },
    onWorkerEvent: (event) => {
      if (event.type === "error") errors.push(event.error);
    },
  });
  try {
    await waitUntil(async () => (await federation.listWorkers()).length === 1, {
      what: "the worker to register",
    });
    // The worker keeps running but can no longer reach the store.
    kv.failWorkerWrites = true;
    await waitUntil(async () => (await federation.listWorkers())[0]?.state === "offline", {
      what: "the worker to show offline",
    });
    assert(errors.length > 0, "the failed heartbeats were reported as error events");
    assertEquals((errors[0] as Error).message, "the store is unreachable");
    await waitUntil(async () => (await federation.listWorkers()).length === 0, {
      what: "the offline worker's record to expire",
    });
  } finally {
    controller.abort();
    await within(worker, "the worker to stop");
  }
});

test("presence writes the store once per heartbeat, not once per task", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new CountingKvStore();
  const federation = federationOn(kv, queue);
  const tasks = 300;
  let done = 0;
  const all = deferred();
  const job = federation.defineTask("job", {
    schema: z.object({}),
    handler() {
      if (++done === tasks) all.resolve();
    },
  });
  const controller = new AbortController();
  const startedAt = Date.now();
  const worker = federation.startQueue(undefined, {
    signal: controller.signal,
    presence: { heartbeatInterval: { milliseconds: 200 } },
  });
  let elapsed = 0;
  try {
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    for (let i = 0; i < tasks; i++) await ctx.enqueueTask(job, {});
    await within(all.promise, "every task to run");
  } finally {
    controller.abort();
    await within(worker, "the worker to stop");
    elapsed = Date.now() - startedAt;
  }
  // The first write, one per elapsed interval, and the stopping write.
  const bound = 2 + Math.ceil(elapsed / 200);
  assert(
    kv.workerWrites <= bound,
    `${kv.workerWrites} presence writes in ${elapsed} ms for ${tasks} tasks (at most ${bound})`,
  );
  assert(kv.workerWrites < tasks / 10, `${kv.workerWrites} presence writes for ${tasks} tasks`);
});

test("startQueue checks its presence option, naming the field", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(new MemoryKvStore(), queue);
  await assertRejects(
    () =>
      federation.startQueue(undefined, { presence: { heartbeatInterval: { milliseconds: 5 } } }),
    RangeError,
    "presence.heartbeatInterval",
  );
  await assertRejects(
    () => federation.startQueue(undefined, { presence: { offlineAfterMissedHeartbeats: 0 } }),
    RangeError,
    "presence.offlineAfterMissedHeartbeats",
  );
  await assertRejects(
    // @ts-expect-error: not an option
    () => federation.startQueue(undefined, { presence: { interval: 5 } }),
    Error,
    "heartbeatInterval",
  );
});

test("presence: false keeps a worker unlisted", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new CountingKvStore();
  const federation = federationOn(kv, queue);
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, presence: false });
  const ran = deferred();
  const job = federation.defineTask("job", { schema: z.object({}), handler: () => ran.resolve() });
  await federation.createContext(new URL("https://example.com/"), undefined).enqueueTask(job, {});
  await within(ran.promise, "the task to run");
  assertEquals(await federation.listWorkers(), []);
  controller.abort();
  await within(worker, "the worker to stop");
  assertEquals(kv.workerWrites, 0);
});
