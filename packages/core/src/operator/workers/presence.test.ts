// Worker presence through the federation: what it costs the store, and its
// options.  Registration, identity, busy/idle/offline, counts, heartbeats
// and events are tested on every store by @fedwork/testing's
// testWorkerPresence() (packages/testing/src/presence-suite.ts).
import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { KvKey, KvStore, KvStoreSetOptions } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { describeQueues } from "./presence.ts";

/** A MemoryKvStore that counts the writes under `["fedwork", "worker"]`. */
class CountingKvStore extends MemoryKvStore {
  workerWrites = 0;
  otherWrites = 0;
  override async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    const isWorker = key[0] === "fedwork" && key[1] === "worker";
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

/** A MemoryKvStore whose worker records take `delayMs` to write. */
class SlowWorkerWritesKvStore extends MemoryKvStore {
  readonly pending = new Set<Promise<void>>();
  readonly delayMs: number;
  writing = false;
  constructor(delayMs: number) {
    super();
    this.delayMs = delayMs;
  }
  override set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    if (key[0] !== "fedwork" || key[1] !== "worker") return super.set(key, value, options);
    this.writing = true;
    const write = new Promise((resolve) => setTimeout(resolve, this.delayMs))
      .then(() => super.set(key, value, options))
      .finally(() => {
        this.writing = false;
        this.pending.delete(write);
      });
    this.pending.add(write);
    return write;
  }
}

test("a worker stopped while a heartbeat is being written stays removed", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new SlowWorkerWritesKvStore(150);
  const federation = federationOn(kv, queue);
  const controller = new AbortController();
  const ready = deferred();
  const worker = federation.startQueue(undefined, {
    signal: controller.signal,
    presence: { heartbeatInterval: { milliseconds: 100 } },
    onWorkerEvent: (event) => {
      if (event.type === "ready") ready.resolve();
    },
  });
  try {
    await within(ready.promise, "the worker to be ready");
    // Stop while a heartbeat write is on its way.
    const writing = deferred();
    const poll = setInterval(() => kv.writing && writing.resolve(), 5);
    await within(writing.promise, "a heartbeat write").finally(() => clearInterval(poll));
  } finally {
    controller.abort();
    await within(worker, "the worker to stop");
  }
  // Every write the worker started has landed: none may bring it back.
  while (kv.pending.size > 0) await Promise.all([...kv.pending]);
  assertEquals(await federation.listWorkers(), []);
});

test("the worker-ready line names its queues in words", () => {
  assertEquals(
    describeQueues(["inbox, outbox, fanout, task"]),
    "one queue for inbox, outbox, fanout and task",
  );
  assertEquals(
    describeQueues(["inbox", "outbox, task", "fanout"]),
    "the inbox queue; one queue for outbox and task; the fanout queue",
  );
  assertEquals(describeQueues([]), "no queues");
});
