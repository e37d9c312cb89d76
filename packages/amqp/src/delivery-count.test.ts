// MessageRedelivery.deliveryCount on RabbitMQ, on both queue types: quorum
// queues count the broker's redeliveries in x-delivery-count; classic
// queues only mark them, so Fedwork counts in a copy of the message (see
// delivery.ts).  A worker is killed by closing its connection on the
// broker's side.
import { assertEquals, deferred, test, within } from "@fedify/fixture";
import type { MessageRedelivery } from "@fedwork/core";
import { AmqpMessageQueue } from "./message-queue.ts";
import type { AmqpMessageQueueOptions, AmqpQueueType } from "./options.ts";
import { closeConnectionsNamed } from "./testdata/broker-control.ts";
import { AMQP_URL } from "./testdata/conformance-factory.ts";

/** Runs `body` with a queue of `queueType` on a fresh name, deleting its queues afterwards. */
async function withQueue(
  queueType: AmqpQueueType,
  options: Omit<AmqpMessageQueueOptions, "url" | "queue" | "queueType">,
  body: (queue: AmqpMessageQueue) => Promise<void>,
): Promise<void> {
  const all = { ...options, url: AMQP_URL, queueType, orderingPartitions: 2 };
  const name = `fedwork-test-${crypto.randomUUID().slice(0, 12)}`;
  const queue = new AmqpMessageQueue({ ...all, queue: name });
  try {
    await body(queue);
  } finally {
    await queue[Symbol.asyncDispose]();
    await using cleaner = new AmqpMessageQueue({ ...all, queue: name });
    await cleaner.deleteQueues();
  }
}

/** Listens until `count` deliveries were seen; returns their counts. */
async function countsOf(
  queue: AmqpMessageQueue,
  count: number,
  handler: (message: string, redelivery: MessageRedelivery, seen: number) => Promise<void> | void,
): Promise<(number | undefined)[]> {
  const counts: (number | undefined)[] = [];
  const done = deferred();
  const controller = new AbortController();
  const listening = queue.listen(async (message: string, redelivery?: MessageRedelivery) => {
    counts.push(redelivery?.deliveryCount);
    try {
      await handler(message, redelivery!, counts.length);
    } finally {
      if (counts.length === count) done.resolve();
    }
  }, { signal: controller.signal });
  await within(done.promise, `${count} deliveries`);
  controller.abort();
  await within(listening, "listen() to resolve");
  return counts;
}

for (const queueType of ["classic", "quorum"] as const) {
  for (const keyed of [false, true]) {
    const what = `${queueType} queues, ${keyed ? "a keyed message" : "no ordering key"}`;

    test(`AmqpMessageQueue counts hand-outs until redeliver() resets the count (${what})`, async () => {
      await withQueue(queueType, { redeliveryDelay: { milliseconds: 150 } }, async (queue) => {
        await queue.enqueue("v1", keyed ? { orderingKey: "k" } : {});
        const counts = await countsOf(queue, 4, async (message, redelivery, seen) => {
          if (message === "v1" && seen < 3) throw new Error("Failing on purpose.");
          if (message === "v1") await redelivery.redeliver("v2", { delay: { milliseconds: 0 } });
        });
        // Thrown twice (1, 2: a failure is no outcome), redelivered on the
        // third (3), and the new version counts from 1 again.
        assertEquals(counts, [1, 2, 3, 1]);
      });
    });

    test(`AmqpMessageQueue counts the hand-out of a worker that died (${what})`, async () => {
      await withQueue(queueType, {}, async (queue) => {
        await queue.enqueue("poison", keyed ? { orderingKey: "k" } : {});
        const gate = deferred();
        const counts = countsOf(queue, 2, async (_, __, seen) => {
          if (seen > 1) return;
          // The worker dies mid-handler: its connection goes, the broker
          // takes the message back unacknowledged.
          assertEquals(await closeConnectionsNamed(`fedwork ${queue.queue} listener`), 1);
          await gate.promise;
        });
        // The listener reconnects once the dead run is over.
        setTimeout(() => gate.resolve(), 200);
        assertEquals(await counts, [1, 2]);
      });
    });
  }

  test(`AmqpMessageQueue counts the broker's requeues with nativeRetrial (${queueType} queues)`, async () => {
    await withQueue(queueType, { nativeRetrial: true }, async (queue) => {
      await queue.enqueue("v1");
      const counts = await countsOf(queue, 3, (_, __, seen) => {
        if (seen < 3) throw new Error("Failing on purpose.");
      });
      assertEquals(counts, [1, 2, 3]);
    });
  });

  test(`AmqpMessageQueue keeps counting a keyed message given back at the hold limit (${queueType} queues)`, async () => {
    await withQueue(queueType, { keyedHoldLimit: { milliseconds: 1 } }, async (queue) => {
      await queue.enqueueMany(["first", "second"], { orderingKey: "k" });
      const seen: [string, number | undefined][] = [];
      await countsOf(queue, 3, (message, redelivery) => {
        seen.push([message, redelivery.deliveryCount]);
        if (message === "first" && seen.length === 1) throw new Error("Failing on purpose.");
      });
      // A requeue the process itself made is not copied on a classic
      // queue, so the message keeps its place there.
      assertEquals(
        seen,
        queueType === "classic"
          ? [["first", 1], ["first", 2], ["second", 1]]
          : [["first", 1], ["second", 1], ["first", 2]],
      );
    });
  });

  test(`AmqpMessageQueue does not count prefetched messages given back when listening stops (${queueType} queues)`, async () => {
    await withQueue(queueType, { concurrency: 1, prefetch: 5 }, async (queue) => {
      await queue.enqueueMany(["0", "1", "2", "3"]);
      const started = deferred();
      const release = deferred();
      const controller = new AbortController();
      const listening = queue.listen(async () => {
        started.resolve();
        await release.promise;
      }, { signal: controller.signal });
      await within(started.promise, "the first handler");
      controller.abort();
      release.resolve();
      await within(listening, "listen() to resolve");
      const seen: [string, number | undefined][] = [];
      const counts = await countsOf(queue, 3, (message, redelivery) => {
        seen.push([message, redelivery.deliveryCount]);
      });
      assertEquals(counts, [1, 1, 1]);
      // Published again, behind any the listener had not received yet.
      assertEquals(seen.map(([message]) => message).sort(), ["1", "2", "3"]);
    });
  });
}
