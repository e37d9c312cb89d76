// Which queues the federation hands its messages over to uncopied: the
// in-process queue keeps them as they are (no structuredClone()), alone or
// in a ParallelMessageQueue; a queue that serializes gets them unmarked.
import { assert, assertFalse, deferred, test, within } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../federation/federation.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "./in-process-message-queue.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "./message-queue.ts";
import { isHandedOver, keepsMessages } from "./message-ownership.ts";
import { ParallelMessageQueue } from "./parallel-message-queue.ts";

/** Enqueues one task through a federation on `queue` and returns what reached `inner`. */
async function enqueuedThrough(queue: MessageQueue, inner: InProcessMessageQueue) {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("noop", { schema: z.object({ n: z.number() }), handler() {} });
  let given: unknown;
  const enqueue = inner.enqueue.bind(inner);
  inner.enqueue = (message: unknown, options?: MessageQueueEnqueueOptions) => {
    given = message;
    return enqueue(message, options);
  };
  await federation.createContext(new URL("https://web.example/")).enqueueTask(task, { n: 1 });
  const controller = new AbortController();
  const received = deferred<unknown>();
  const listening = inner.listen((message) => received.resolve(message), {
    signal: controller.signal,
  });
  const handed = await within(received.promise, "the message");
  controller.abort();
  await listening;
  return { given, handed };
}

test("the federation's messages reach the in-process queue, alone or wrapped, uncopied", async () => {
  for (const wrap of [false, true]) {
    await using inner = new InProcessMessageQueue();
    const queue = wrap ? new ParallelMessageQueue(inner, 2) : inner;
    assert(keepsMessages(queue));
    const { given, handed } = await enqueuedThrough(queue, inner);
    assert(given != null && handed === given, `copied (wrapped: ${wrap})`);
  }
});

test("the federation does not mark the messages it gives a queue that serializes them", async () => {
  const given: unknown[] = [];
  const queue: MessageQueue = {
    enqueue(message: unknown) {
      given.push(message);
      return Promise.resolve();
    },
    listen: () => Promise.resolve(),
  };
  assertFalse(keepsMessages(queue));
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  const task = federation.defineTask("noop", { schema: z.object({ n: z.number() }), handler() {} });
  await federation.createContext(new URL("https://web.example/")).enqueueTask(task, { n: 1 });
  assert(given.length === 1);
  assertFalse(isHandedOver(given[0]));
});
