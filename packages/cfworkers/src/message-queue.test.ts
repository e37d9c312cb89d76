import { assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import type { WorkersQueue, WorkersQueueSendRequest } from "./bindings.ts";
import { WorkersMessageQueue } from "./message-queue.ts";
import { startWorker } from "./testdata/miniflare.ts";

/** Miniflare's real producer binding, counting the batches sent through it. */
async function countingProducer(worker: Awaited<ReturnType<typeof startWorker>>) {
  const producer = await worker.miniflare.getQueueProducer("QUEUE") as unknown as WorkersQueue;
  const batches: number[] = [];
  const sends: number[] = [];
  const queue: WorkersQueue = {
    send: (body, options) => {
      sends.push(options?.delaySeconds ?? 0);
      return producer.send(body, options);
    },
    sendBatch: (messages, options) => {
      const list = [...messages] as WorkersQueueSendRequest[];
      batches.push(list.length);
      return producer.sendBatch(list, options);
    },
  };
  return { producer, queue, batches, sends };
}

test("enqueueMany() sends more than 100 messages in batches Cloudflare accepts", async () => {
  await using worker = await startWorker();
  const { producer, queue, batches } = await countingProducer(worker);
  // What the split is for: Cloudflare refuses a larger batch.
  await assertRejects(() =>
    producer.sendBatch(Array.from({ length: 101 }, (_, i) => ({ body: { i } })))
  );
  const messages = Array.from({ length: 250 }, (_, i) => ({ type: "test", i }));
  await new WorkersMessageQueue(queue).enqueueMany(messages);
  assertEquals(batches, [100, 100, 50]);
});

test("enqueue() turns a delay into whole delaySeconds", async () => {
  await using worker = await startWorker();
  const { queue, sends } = await countingProducer(worker);
  await new WorkersMessageQueue(queue).enqueue({ type: "test" }, { delay: { milliseconds: 1500 } });
  assertEquals(sends, [2]);
});

test("a delay over Cloudflare's 12 hours is refused before anything is sent", async () => {
  await using worker = await startWorker();
  const { queue, batches, sends } = await countingProducer(worker);
  const mq = new WorkersMessageQueue(queue);
  await assertRejects(() => mq.enqueue({}, { delay: { hours: 13 } }), RangeError, "12 hours");
  await assertRejects(
    () => mq.enqueueMany([{}, {}], { delay: { hours: 12, seconds: 1 } }),
    RangeError,
    "12 hours",
  );
  await mq.enqueue({}, { delay: { hours: 12 } });
  assertEquals([batches, sends], [[], [43_200]]);
});

test("a message over Cloudflare's 128 KiB is refused before any of its batch is sent", async () => {
  await using worker = await startWorker();
  const { queue, batches } = await countingProducer(worker);
  const mq = new WorkersMessageQueue(queue);
  const large = { text: "x".repeat(130 * 1024) };
  await assertRejects(() => mq.enqueue(large), RangeError, "128 KiB");
  await assertRejects(() => mq.enqueueMany([{ small: true }, large]), RangeError, "128 KiB");
  assertEquals(batches, []);
});

test("WorkersMessageQueue refuses listen() and points to processQueueBatch()", async () => {
  const mq = new WorkersMessageQueue({
    send: () => Promise.resolve(),
    sendBatch: () => Promise.resolve(),
  });
  await assertRejects(() => mq.listen(() => {}), TypeError, "processQueueBatch");
  assertEquals(mq.nativeRetrial, false);
});

test("new WorkersMessageQueue() explains why @fedify/cfworkers's orderingKv is refused", () => {
  const binding = { send: () => Promise.resolve(), sendBatch: () => Promise.resolve() };
  assertThrows(
    () => new WorkersMessageQueue(binding, { orderingKv: {} } as never),
    TypeError,
    "cannot hold a lock atomically",
  );
  assertThrows(() => new WorkersMessageQueue(binding, { delay: 1 } as never), TypeError, "delay");
  for (const option of ["orderingKeyPrefix", "orderingLockTtl"]) {
    assertThrows(
      () => new WorkersMessageQueue(binding, { [option]: 1 } as never),
      TypeError,
      `${option} of new WorkersMessageQueue(): it belongs to @fedify/cfworkers's orderingKv lock`,
    );
  }
  assertThrows(
    () => new WorkersMessageQueue(undefined as never),
    TypeError,
    "Cloudflare Queues producer binding",
  );
});

test("WorkersMessageQueue refuses a priority other than 0, which Cloudflare Queues would ignore", async () => {
  const sent: unknown[] = [];
  const mq = new WorkersMessageQueue({
    send: (body) => Promise.resolve(void sent.push(body)),
    sendBatch: (messages) => Promise.resolve(void sent.push(...messages)),
  });
  await assertRejects(() => mq.enqueue({}, { priority: 1 }), RangeError, "priority");
  await assertRejects(() => mq.enqueueMany([{}], { priority: -2 }), RangeError, "priority");
  await mq.enqueue({}, { priority: 0 });
  assertEquals(sent.length, 1);
});
