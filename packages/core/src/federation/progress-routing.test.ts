// Task progress, status records and capability routing on the in-process
// engines: the @fedwork/testing suite with two federations sharing one
// queue, store and pub/sub, plus the checks that need no second process.
import {
  assert,
  assertEquals,
  assertRejects,
  assertThrows,
  deferred,
  delay,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { testTaskProgressAndRouting } from "@fedwork/testing";
import type { KvKey, KvStore, KvStoreSetOptions } from "../kv/kv-store.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessPubSub } from "../pubsub/in-process-pubsub.ts";
import type { PubSub } from "../pubsub/pubsub.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { TaskDefinitionError } from "../tasks/errors.ts";
import {
  MAX_TASK_PROGRESS_DATA_BYTES,
  normalizeTaskProgress,
  TaskProgressError,
} from "../tasks/progress.ts";
import { capabilityChannel } from "../tasks/routing.ts";
import { createFederation } from "./federation.ts";
import { TASK_UPDATES_TOPIC } from "../operator/status/mod.ts";

const shared = new Map<
  string,
  { queue: InProcessMessageQueue; kv: MemoryKvStore; pubsub: InProcessPubSub }
>();

testTaskProgressAndRouting({
  name: "InProcessMessageQueue",
  open(namespace) {
    let engines = shared.get(namespace);
    if (engines == null) {
      engines = {
        queue: new InProcessMessageQueue(),
        kv: new MemoryKvStore(),
        pubsub: new InProcessPubSub(),
      };
      shared.set(namespace, engines);
    }
    return { ...engines, dispose: () => Promise.resolve() };
  },
  cleanup(namespace) {
    const engines = shared.get(namespace);
    shared.delete(namespace);
    return engines?.queue[Symbol.asyncDispose]() ?? Promise.resolve();
  },
});

const schema = {
  "~standard": {
    version: 1 as const,
    vendor: "test",
    validate: (value: unknown) => ({ value: value as { n: number } }),
  },
};

test("progress values are checked", () => {
  assertEquals(normalizeTaskProgress(0), { percent: 0 });
  assertEquals(normalizeTaskProgress(100), { percent: 100 });
  assertEquals(normalizeTaskProgress({ data: { step: "a" } }), { data: { step: "a" } });
  for (const bad of [-0.1, 100.5, Number.NaN, Infinity, "50", null, [], {}, { other: 1 }]) {
    // deno-lint-ignore no-explicit-any
    assertThrows(() => normalizeTaskProgress(bad as any), TaskProgressError);
  }
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assertThrows(() => normalizeTaskProgress({ data: cyclic }), TaskProgressError, "itself");
  assertThrows(() => normalizeTaskProgress({ data: new Date() }), TaskProgressError, "plain");
  assertThrows(() => normalizeTaskProgress({ data: { n: 1n } }), TaskProgressError);
  assertThrows(
    () => normalizeTaskProgress({ data: "x".repeat(MAX_TASK_PROGRESS_DATA_BYTES) }),
    TaskProgressError,
    "bytes",
  );
});

test("watchTasks() yields every task's updates and unsubscribes on abort", async () => {
  const pubsub = new InProcessPubSub();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    pubsub,
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("t", {
    schema,
    handler: async (ctx) => await ctx.task.reportProgress(50),
  });
  const controller = new AbortController();
  const seen: string[] = [];
  const watching = (async () => {
    for await (const update of federation.watchTasks({ signal: controller.signal })) {
      seen.push(`${update.id}:${update.kind}:${update.status.state}`);
      if (seen.filter((entry) => entry.endsWith("completed")).length === 2) controller.abort();
    }
  })();
  // Let the watcher subscribe.
  while (pubsub.subscriptionCount === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  const ctx = federation.createContext(new URL("https://app.example/"), undefined);
  const [first, second] = await ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
  assert(first.status === "enqueued" && second.status === "enqueued");
  const stop = new AbortController();
  const worker = federation.startQueue(undefined, { signal: stop.signal });
  await watching;
  stop.abort();
  await worker;
  for (const id of [first.messageId, second.messageId]) {
    assertEquals(
      seen.filter((entry) => entry.startsWith(id)),
      [
        `${id}:state:queued`,
        `${id}:state:running`,
        `${id}:progress:running`,
        `${id}:state:completed`,
      ],
    );
  }
  assertEquals(pubsub.subscriptionCount, 0);
  // Breaking out of a loop unsubscribes too, and so does an aborted signal.
  for await (const _ of federation.watchTask(first.messageId)) break;
  assertEquals(pubsub.subscriptionCount, 0);
  const aborted = AbortSignal.abort();
  for await (const _ of federation.watchTasks({ signal: aborted })) throw new Error("yielded");
  assertEquals(pubsub.subscriptionCount, 0);
  // A status of a failed task keeps its error.
  assertEquals(await federation.getTaskStatus("unknown"), undefined);
  await pubsub.publish(TASK_UPDATES_TOPIC, "not json");
});

test("a failed task's status keeps the error and the last progress", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
    taskRetryPolicy: () => null,
  });
  const task = federation.defineTask("fails", {
    schema,
    async handler(ctx) {
      await ctx.task.reportProgress({ percent: 30, data: { step: "download" } });
      throw new Error("disk full");
    },
  });
  const result = await federation.createContext(new URL("https://app.example/"), undefined)
    .enqueueTask(task, { n: 1 });
  assert(result.status === "enqueued");
  const stop = new AbortController();
  const worker = federation.startQueue(undefined, { signal: stop.signal });
  const states: string[] = [];
  for await (const update of federation.watchTask(result.messageId)) {
    states.push(update.status.state);
  }
  stop.abort();
  await worker;
  assertEquals(states.at(-1), "failed");
  const status = await federation.getTaskStatus(result.messageId);
  assertEquals(status?.state, "failed");
  assertEquals(status?.error, { name: "Error", message: "disk full" });
  assertEquals(status?.progress?.percent, 30);
  assertEquals(status?.progress?.data, { step: "download" });
});

test("taskStatusRetention: 0 keeps no status records", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
    taskStatusRetention: 0,
  });
  const task = federation.defineTask("t", { schema, handler: () => {} });
  const result = await federation.createContext(new URL("https://app.example/"), undefined)
    .enqueueTask(task, { n: 1 });
  assert(result.status === "enqueued");
  assertEquals(await federation.getTaskStatus(result.messageId), undefined);
});

test("capability options are checked", async () => {
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({ kv: new MemoryKvStore(), queue });
  assertThrows(
    // deno-lint-ignore no-explicit-any
    () => federation.defineTask("x", { schema, handler() {}, capabilities: "gpu" as any }),
    TaskDefinitionError,
    "capabilities",
  );
  assertThrows(
    () => federation.defineTask("y", { schema, handler() {}, capabilities: [""] }),
    TaskDefinitionError,
    "capabilities",
  );
  // A queue without derive() cannot route by capability.
  const plain: MessageQueue = {
    enqueue: (message, options) => queue.enqueue(message, options),
    listen: (handler, options) => queue.listen(handler, options),
  };
  const other = createFederation<void>({ kv: new MemoryKvStore(), queue: plain });
  const error = assertThrows(
    () => other.defineTask("z", { schema, handler() {}, capabilities: ["gpu"] }),
    TaskDefinitionError,
  );
  assertEquals(error.option, "capabilities");
  await assertRejects(
    // deno-lint-ignore no-explicit-any
    () => federation.startQueue(undefined, { capabilities: [1] as any }),
    TypeError,
    "capabilities",
  );
  assertThrows(() => queue.derive("Bad Channel"), TypeError, "channel");
  assert(queue.derive("cap_gpu") === queue.derive("cap_gpu"));
});

test("capability channels are short, safe and distinct", () => {
  const channels = new Set<string>();
  for (const set of [["gpu"], ["GPU"], ["gpu", "ffmpeg"], ["a".repeat(64), "b"], ["é"]]) {
    const channel = capabilityChannel(set);
    assert(/^[a-z0-9_]{1,40}$/.test(channel), channel);
    channels.add(channel);
  }
  assertEquals(channels.size, 5);
});

test("watchTask() ends at the final state even when the transport loses updates", async () => {
  // A transport that accepts subscriptions and loses every payload.
  const lossy: PubSub = {
    publish: () => Promise.resolve(),
    subscribe: () => Promise.resolve(),
  };
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    pubsub: lossy,
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("t", { schema, handler: () => {} });
  const result = await federation.createContext(new URL("https://app.example/"), undefined)
    .enqueueTask(task, { n: 1 });
  assert(result.status === "enqueued");
  const stop = new AbortController();
  const worker = federation.startQueue(undefined, { signal: stop.signal });
  const states: string[] = [];
  await within(
    (async () => {
      for await (const update of federation.watchTask(result.messageId)) {
        states.push(update.status.state);
      }
    })(),
    "watchTask() to read the completed record",
  );
  stop.abort();
  await worker;
  assertEquals(states.at(-1), "completed");
});

/**
 * A federation over an in-process queue whose store calls `beforeWrite`
 * with the task id and state of each status record before writing it.
 */
function federationWithStatusWrites(
  beforeWrite: (id: string, state: string) => void | Promise<void>,
  store = new MemoryKvStore(),
) {
  const kv: KvStore = {
    get: (key) => store.get(key),
    async set(key: KvKey, value: unknown, options?: KvStoreSetOptions) {
      if (key[1] === "task-status") await beforeWrite(key[2], (value as { state: string }).state);
      await store.set(key, value, options);
    },
    delete: (key) => store.delete(key),
    list: (prefix) => store.list(prefix),
    cas: (key, expected, value, options) => store.cas(key, expected, value, options),
  };
  return createFederation<void>({
    kv,
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
}

test("a running record is stored only for a task that is still running after a moment", async () => {
  // Which states reach the store, by task id.
  const stored = new Map<string, string[]>();
  const federation = federationWithStatusWrites((id, state) => {
    stored.set(id, [...stored.get(id) ?? [], state]);
  });
  const release = deferred();
  const task = federation.defineTask("t", {
    schema,
    handler: async (_ctx, data) => {
      if ((data as { n: number }).n === 2) await release.promise;
    },
  });
  const ctx = federation.createContext(new URL("https://app.example/"), undefined);
  const [quick, slow] = await ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
  assert(quick.status === "enqueued" && slow.status === "enqueued");
  const stop = new AbortController();
  const worker = federation.startQueue(undefined, { signal: stop.signal });
  // The slow task's start is known at once in this process, and reaches the
  // store a moment later, while it still runs.
  await waitUntil(
    async () => (await federation.getTaskStatus(slow.messageId))?.state === "running",
    {
      what: "the slow task to be running",
    },
  );
  await waitUntil(() => stored.get(slow.messageId)?.at(-1) === "running", {
    what: "the slow task's running record to be stored",
  });
  release.resolve();
  await waitUntil(() => stored.get(slow.messageId)?.at(-1) === "completed", {
    what: "the slow task's completed record",
  });
  stop.abort();
  await worker;
  assertEquals(stored.get(quick.messageId), ["queued", "completed"]);
  assertEquals(stored.get(slow.messageId), ["queued", "running", "completed"]);
});

test("a task's end is stored in the background, and a stopping worker waits for it", async () => {
  const gate = deferred();
  const kv = new MemoryKvStore();
  const federation = federationWithStatusWrites(async (_id, state) => {
    if (state === "completed") await gate.promise;
  }, kv);
  const secondRan = deferred();
  const task = federation.defineTask("t", {
    schema,
    handler: (_ctx, data) => {
      if ((data as { n: number }).n === 2) secondRan.resolve();
    },
  });
  const ctx = federation.createContext(new URL("https://app.example/"), undefined);
  const [first] = await ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
  assert(first.status === "enqueued");
  const stop = new AbortController();
  const worker = federation.startQueue(undefined, { signal: stop.signal });
  // One task at a time: the second runs although the store has not
  // written the first one's end yet, which this process knows already.
  await within(secondRan.promise, "the second task to run while the first's record waits");
  assertEquals((await federation.getTaskStatus(first.messageId))?.state, "completed");
  assertEquals(
    (await kv.get<{ state: string }>(["fedwork", "task-status", first.messageId]))?.state,
    "queued",
  );
  stop.abort();
  let stopped = false;
  const stopping = worker.then(() => stopped = true);
  await delay(50);
  assertEquals(stopped, false);
  gate.resolve();
  await stopping;
  assertEquals(
    (await kv.get<{ state: string }>(["fedwork", "task-status", first.messageId]))?.state,
    "completed",
  );
});
