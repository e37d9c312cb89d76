// Task deduplication through the federation: the key–value reservation used
// for queues that do not deduplicate natively, and the hand-over to a
// queue's enqueueDeduplicated() when it does.  The native implementations
// are tested against their engines by @fedwork/testing.
import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../federation/federation.ts";
import type { FederationOptions } from "../federation/options.ts";
import { deferred, within as withTimeout } from "@fedify/fixture";
import { RecordingQueue } from "../federation/testdata/test-support.ts";
import type { KvStore } from "../kv/kv-store.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import type {
  MessageQueueDeduplicatedEnqueueOptions,
  MessageQueueEnqueueOptions,
} from "../queue/message-queue.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { TaskDeduplicationNotSupportedError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";

const base = new URL("https://web.example/");

function federationOn(
  queue: RecordingQueue,
  options: Partial<FederationOptions<void>> = {},
): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    ...options,
  });
}

function defineEcho(federation: Federation<void>, handler: (id: string) => void | Promise<void>) {
  return federation.defineTask("echo", {
    schema: z.object({ id: z.string() }),
    handler: (_ctx, { id }) => handler(id),
  });
}

test("many concurrent enqueues with one deduplication key enqueue one task", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationOn(queue);
  const echo = defineEcho(federation, () => {});
  const ctx = federation.createContext(base, undefined);
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      ctx.enqueueTask(echo, { id: `${i}` }, {
        deduplicationKey: "only-one",
      })),
  );
  assertEquals(queue.enqueued.length, 1);
  const enqueued = results.filter((result) => result.status === "enqueued");
  assertEquals(enqueued.length, 1);
  assertEquals(enqueued[0], { status: "enqueued", messageId: queue.enqueued[0].message.id });
  for (const result of results) {
    if (result.status === "deduplicated") assertEquals(result.deduplicationKey, "only-one");
  }
  // Without a key, each call enqueues, and says so.
  const plain = await ctx.enqueueTask(echo, { id: "plain" });
  assertEquals(plain.status, "enqueued");
  assertEquals(queue.enqueued.length, 2);
});

test("deduplication keys are scoped to the task name", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationOn(queue);
  const echo = defineEcho(federation, () => {});
  const other = federation.defineTask("other", { schema: z.object({}), handler() {} });
  const ctx = federation.createContext(base, undefined);
  assertEquals(
    (await ctx.enqueueTask(echo, { id: "a" }, { deduplicationKey: "k" })).status,
    "enqueued",
  );
  assertEquals((await ctx.enqueueTask(other, {}, { deduplicationKey: "k" })).status, "enqueued");
  assertEquals(
    (await ctx.enqueueTask(echo, { id: "b" }, { deduplicationKey: "k" })).status,
    "deduplicated",
  );
});

test("a deduplication key is free again once its task has completed", async () => {
  const queue = new RecordingQueue();
  const federation = federationOn(queue);
  const runs: string[] = [];
  let ran = deferred();
  const echo = defineEcho(federation, (id) => {
    runs.push(id);
    ran.resolve();
  });
  const completed = deferred();
  federation.on("completed", () => completed.resolve());
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  try {
    const ctx = federation.createContext(base, undefined);
    assertEquals(
      (await ctx.enqueueTask(echo, { id: "1" }, { deduplicationKey: "k" })).status,
      "enqueued",
    );
    await withTimeout(ran.promise, "the first run");
    await withTimeout(completed.promise, "the completed event");
    ran = deferred();
    assertEquals(
      (await ctx.enqueueTask(echo, { id: "2" }, { deduplicationKey: "k" })).status,
      "enqueued",
    );
    await withTimeout(ran.promise, "the second run");
    assertEquals(runs, ["1", "2"]);
  } finally {
    controller.abort();
    await worker;
  }
});

test("a deduplication key is held while its task waits for a retry", async () => {
  const queue = new RecordingQueue();
  const federation = federationOn(queue, {
    taskRetryPolicy: ({ attempts }) => attempts < 2 ? millisecondsToDuration(200) : null,
  });
  const retrying = deferred();
  const failing = federation.defineTask("failing", {
    schema: z.object({}),
    handler() {
      throw new Error("not yet");
    },
    on: { retrying: () => retrying.resolve() },
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  try {
    const ctx = federation.createContext(base, undefined);
    await ctx.enqueueTask(failing, {}, { deduplicationKey: "k" });
    await withTimeout(retrying.promise, "the retrying event");
    assertEquals(
      (await ctx.enqueueTask(failing, {}, { deduplicationKey: "k" })).status,
      "deduplicated",
    );
  } finally {
    controller.abort();
    await worker;
  }
});

test("a deduplication key is free again after taskDeduplicationTtl", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationOn(queue, { taskDeduplicationTtl: { milliseconds: 150 } });
  const echo = defineEcho(federation, () => {});
  const ctx = federation.createContext(base, undefined);
  assertEquals(
    (await ctx.enqueueTask(echo, { id: "1" }, { deduplicationKey: "k" })).status,
    "enqueued",
  );
  assertEquals(
    (await ctx.enqueueTask(echo, { id: "2" }, { deduplicationKey: "k" })).status,
    "deduplicated",
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The first task never ran: only the TTL freed the key.
  assertEquals(
    (await ctx.enqueueTask(echo, { id: "3" }, { deduplicationKey: "k" })).status,
    "enqueued",
  );
  assertEquals(queue.enqueued.length, 2);
});

test("enqueueTaskMany deduplicates item by item with a key function", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationOn(queue);
  const echo = defineEcho(federation, () => {});
  const ctx = federation.createContext(base, undefined);
  await ctx.enqueueTask(echo, { id: "b" }, { deduplicationKey: "b" });
  const results = await ctx.enqueueTaskMany(
    echo,
    [{ id: "a" }, { id: "b" }, { id: "a" }, { id: "c" }, { id: "free" }],
    { deduplicationKey: ({ id }) => id === "free" ? undefined : id },
  );
  assertEquals(results.map((result) => result.status), [
    "enqueued",
    "deduplicated",
    "deduplicated",
    "enqueued",
    "enqueued",
  ]);
  assertEquals(queue.enqueued.length, 4);
  // One string key lets only the batch's first payload through.
  const batch = await ctx.enqueueTaskMany(echo, [{ id: "x" }, { id: "y" }], {
    deduplicationKey: "batch",
  });
  assertEquals(batch.map((result) => result.status), ["enqueued", "deduplicated"]);
});

test("a keyed enqueue rejects and enqueues nothing when the KvStore has no cas()", async () => {
  const memory = new MemoryKvStore();
  const kv: KvStore = {
    get: (key) => memory.get(key),
    set: (key, value, options) => memory.set(key, value, options),
    delete: (key) => memory.delete(key),
    list: (prefix) => memory.list(prefix),
  };
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationOn(queue, { kv });
  const echo = defineEcho(federation, () => {});
  const ctx = federation.createContext(base, undefined);
  const error = await assertRejects(
    () =>
      ctx.enqueueTaskMany(echo, [{ id: "plain" }, { id: "keyed" }], {
        deduplicationKey: ({ id }) => id === "keyed" ? id : undefined,
      }),
    TaskDeduplicationNotSupportedError,
  );
  assert(error.message.includes("cas()"));
  assertEquals(queue.enqueued.length, 0);
  // Without a key the store's capabilities do not matter.
  assertEquals((await ctx.enqueueTask(echo, { id: "plain" })).status, "enqueued");
});

test("a queue that deduplicates natively gets the key instead of the KvStore", async () => {
  const calls: MessageQueueDeduplicatedEnqueueOptions[] = [];
  const held = new Set<string>();
  const queue = new (class extends RecordingQueue {
    readonly nativeDeduplication = true;
    // deno-lint-ignore no-explicit-any
    async enqueueDeduplicated(message: any, options: MessageQueueDeduplicatedEnqueueOptions) {
      calls.push(options);
      if (held.has(options.deduplicationKey)) return false;
      held.add(options.deduplicationKey);
      await this.enqueue(message, options as MessageQueueEnqueueOptions);
      return true;
    }
  })({ deliver: false });
  const kv = new MemoryKvStore();
  const federation = federationOn(queue, { kv, taskDeduplicationTtl: { minutes: 5 } });
  const echo = defineEcho(federation, () => {});
  const ctx = federation.createContext(base, undefined);
  const first = await ctx.enqueueTask(echo, { id: "1" }, {
    deduplicationKey: "k",
    orderingKey: "o",
  });
  const second = await ctx.enqueueTask(echo, { id: "2" }, { deduplicationKey: "k" });
  assertEquals([first.status, second.status], ["enqueued", "deduplicated"]);
  assertEquals(calls.length, 2);
  assertEquals(calls[0].orderingKey, "o");
  assertEquals(calls[0].deduplicationTtl, { milliseconds: 300_000 });
  assertEquals(calls[0].deduplicationKey, calls[1].deduplicationKey);
  assert(calls[0].deduplicationKey.includes("echo"));
  const message = queue.enqueued[0].message as TaskMessage;
  assertEquals(message.deduplication, { key: "k", via: "queue" });
  // Nothing was reserved in the store.
  const entries = [];
  for await (const entry of kv.list(["fedwork", "task-deduplication"])) entries.push(entry);
  assertEquals(entries, []);
});
