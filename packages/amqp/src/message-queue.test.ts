import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  deferred,
  test,
  within,
} from "@fedify/fixture";
import type { MessageRedelivery } from "@fedwork/core";
import { AmqpMessageQueue } from "./message-queue.ts";
import { AMQP_URL } from "./testdata/conformance-factory.ts";
import { closeConnectionsNamed, rabbitmqctl } from "./testdata/broker-control.ts";
import {
  AmqpConnectionError,
  AmqpMessageQueueClosedError,
  AmqpUnroutableMessageError,
} from "./errors.ts";
import type { AmqpMessageQueueOptions } from "./options.ts";
import {
  DELAY_STEPS_MS,
  delayQueueName,
  delayStepFor,
  hashKey,
  knownDelayQueueNames,
  MAX_DELAY_MS,
  targetQueueName,
} from "./topology.ts";
import { resolveAmqpOptions } from "./options.ts";
import { connect } from "amqplib";

/**
 * Runs `body` with a queue on a fresh namespace, then aborts its listeners,
 * disposes it and deletes its queues.
 */
async function withQueue(
  options: Omit<AmqpMessageQueueOptions, "url" | "queue">,
  body: (queue: AmqpMessageQueue, controller: AbortController) => Promise<void>,
): Promise<void> {
  const name = `fedwork-test-${crypto.randomUUID().slice(0, 12)}`;
  const queue = new AmqpMessageQueue({ ...options, url: AMQP_URL, queue: name });
  const controller = new AbortController();
  try {
    await body(queue, controller);
  } finally {
    controller.abort();
    await queue[Symbol.asyncDispose]();
    await using cleaner = new AmqpMessageQueue({ ...options, url: AMQP_URL, queue: name });
    await cleaner.deleteQueues();
  }
}

test("AmqpMessageQueue rejects invalid options naming the option", () => {
  assertThrows(() => new AmqpMessageQueue({ concurrency: 0 }), RangeError, "concurrency");
  assertThrows(() => new AmqpMessageQueue({ concurrency: 1.5 }), RangeError, "concurrency");
  assertThrows(() => new AmqpMessageQueue({ prefetch: 0 }), RangeError, "prefetch");
  assertThrows(
    () => new AmqpMessageQueue({ orderingPartitions: 0 }),
    RangeError,
    "orderingPartitions",
  );
  assertThrows(() => new AmqpMessageQueue({ queue: "" }), RangeError, "queue");
  assertThrows(() => new AmqpMessageQueue({ queue: "amq.x" }), RangeError, "queue");
  assertThrows(() => new AmqpMessageQueue({ url: "http://x" }), TypeError, "url");
  assertThrows(
    () => new AmqpMessageQueue({ maxReconnectDelay: { seconds: -1 } }),
    RangeError,
    "maxReconnectDelay",
  );
  // deno-lint-ignore no-explicit-any
  assertThrows(() => new AmqpMessageQueue({ nativeRetrial: "yes" as any }), TypeError);
  assertThrows(
    () => new AmqpMessageQueue({ redeliveryDelay: { seconds: 0 } }),
    RangeError,
    "The redeliveryDelay option must be a positive duration",
  );
  assertThrows(
    () => new AmqpMessageQueue({ keyedHoldLimit: { seconds: -1 } }),
    RangeError,
    "keyedHoldLimit",
  );
});

test("AmqpMessageQueue rejects delays longer than RabbitMQ's longest TTL naming the option", async () => {
  assertThrows(
    () => new AmqpMessageQueue({ redeliveryDelay: { milliseconds: MAX_DELAY_MS + 1 } }),
    RangeError,
    "redeliveryDelay",
  );
  await using queue = new AmqpMessageQueue({ url: AMQP_URL });
  await assertRejects(
    () => queue.enqueue("x", { delay: { days: 60 } }),
    RangeError,
    "delay must be at most",
  );
});

test("AmqpMessageQueue prefetches max(16, 2 * concurrency) by default", () => {
  assertEquals(resolveAmqpOptions({}).prefetch, 16);
  assertEquals(resolveAmqpOptions({ concurrency: 10 }).prefetch, 20);
  assertEquals(resolveAmqpOptions({ concurrency: 40000 }).prefetch, 65535);
  assertEquals(resolveAmqpOptions({ concurrency: 10, prefetch: 3 }).prefetch, 3);
});

test("AmqpMessageQueue rounds every delay up to one of a bounded set of steps", () => {
  assertEquals(DELAY_STEPS_MS.length, 51);
  assertEquals(DELAY_STEPS_MS.at(-1), MAX_DELAY_MS);
  const used = new Set<number>();
  for (let ms = 1; ms <= MAX_DELAY_MS; ms = Math.ceil(ms * 1.01) + 7) {
    const step = delayStepFor(ms);
    assert(step >= ms, `${ms} ms was rounded down to ${step} ms`);
    if (ms > 128) assert(step <= ms * 1.5, `${ms} ms was rounded up to ${step} ms`);
    used.add(step);
  }
  assertEquals(delayStepFor(MAX_DELAY_MS), MAX_DELAY_MS);
  assertEquals(delayStepFor(1), 128);
  assertEquals(delayStepFor(1000), 1024);
  assertEquals(delayStepFor(30_000), 32_768);
  assert(used.size <= DELAY_STEPS_MS.length);
});

test("AmqpMessageQueue declares at most one delay queue per step for many distinct delays", async () => {
  await withQueue({}, async (queue) => {
    // 200 distinct delays from 1 minute to about 11 minutes (none of them
    // expires while the test counts them).
    const delays = Array.from({ length: 200 }, (_, i) => 60_000 + i * 3001);
    for (const ms of delays) await queue.enqueue({ ms }, { delay: { milliseconds: ms } });
    const steps = new Set(delays.map((ms) => delayStepFor(ms)));
    const declared = knownDelayQueueNames(queue.queue);
    // 1 to 11 minutes spans under four doublings: at most 2 steps each.
    assert(steps.size <= 8, `${steps.size} steps`);
    assertEquals(
      new Set(declared),
      new Set([...steps].map((ms) => delayQueueName(queue.queue, ms))),
    );
    // The broker holds exactly those queues, with every message.
    const model = await connect(AMQP_URL);
    try {
      const channel = await model.createChannel();
      let messages = 0;
      for (const name of declared) messages += (await channel.checkQueue(name)).messageCount;
      assertEquals(messages, delays.length);
    } finally {
      await model.close();
    }
    assertEquals((await queue.getDepth()).delayed, delays.length);
  });
});

test("AmqpMessageQueue never hands a delayed message out before its delay", async () => {
  await withQueue({}, async (queue, controller) => {
    const handled = new Map<number, number>();
    const allHandled = deferred();
    // Each is rounded up to a longer step; none may come early.
    const delays = [130, 300, 700, 1100];
    void queue.listen((message: { ms: number }) => {
      handled.set(message.ms, Date.now());
      if (handled.size === delays.length) allHandled.resolve();
    }, { signal: controller.signal });
    const start = Date.now();
    await Promise.all(delays.map((ms) => queue.enqueue({ ms }, { delay: { milliseconds: ms } })));
    await within(allHandled.promise, "the delayed messages");
    for (const ms of delays) {
      const waited = handled.get(ms)! - start;
      assert(waited >= ms, `a message delayed by ${ms} ms was handled after ${waited} ms`);
    }
  });
});

test("AmqpMessageQueue hashes an ordering key to the same partition every time", () => {
  const options = resolveAmqpOptions({ queue: "q", orderingPartitions: 8 });
  assertEquals(hashKey("actor-1"), hashKey("actor-1"));
  // FNV-1a of the empty string is the offset basis.
  assertEquals(hashKey(""), 0x811c9dc5);
  assertEquals(targetQueueName(options, "actor-1"), `q.ordered.${hashKey("actor-1") % 8}`);
  assertEquals(targetQueueName(options), "q");
});

test("AmqpMessageQueue rejects enqueue() with a clear error when the broker is unreachable", async () => {
  await using queue = new AmqpMessageQueue({ url: "amqp://guest:secret@127.0.0.1:1" });
  const error = await assertRejects(() => queue.enqueue("x"), AmqpConnectionError);
  assert(error.message.includes("127.0.0.1:1"), error.message);
  assert(!error.message.includes("secret"), "The password leaked into the error message.");
});

test("AmqpMessageQueue rejects enqueue() and listen() after it was disposed", async () => {
  const queue = new AmqpMessageQueue({ url: AMQP_URL });
  await queue[Symbol.asyncDispose]();
  await assertRejects(() => queue.enqueue("x"), AmqpMessageQueueClosedError);
  await assertRejects(() => queue.listen(() => {}), AmqpMessageQueueClosedError);
});

test("AmqpMessageQueue listen() keeps retrying an unreachable broker until aborted", async () => {
  await using queue = new AmqpMessageQueue({
    url: "amqp://guest:guest@127.0.0.1:1",
    maxReconnectDelay: { milliseconds: 200 },
  });
  const controller = new AbortController();
  let settled = false;
  const listening = queue.listen(() => {}, { signal: controller.signal }).finally(() => {
    settled = true;
  });
  // Several connection attempts fail meanwhile; none of them ends listen().
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assertEquals(settled, false);
  controller.abort();
  await within(listening, "listen() to resolve after the abort");
});

test("AmqpMessageQueue hands prefetched, unstarted messages back when listening stops", async () => {
  await withQueue({ concurrency: 1, prefetch: 5 }, async (queue, controller) => {
    await queue.enqueueMany([0, 1, 2, 3, 4]);
    const started = deferred();
    const release = deferred();
    const firstRun: number[] = [];
    const listening = queue.listen(async (message: number) => {
      firstRun.push(message);
      started.resolve();
      await release.promise;
    }, { signal: controller.signal });
    await within(started.promise, "the first handler");
    controller.abort();
    release.resolve();
    await within(listening, "listen() to resolve");
    assertEquals(firstRun, [0]);
    const rest: number[] = [];
    const all = deferred();
    const again = new AbortController();
    const relistening = queue.listen((message: number) => {
      rest.push(message);
      if (rest.length === 4) all.resolve();
    }, { signal: again.signal });
    await within(all.promise, "the four remaining messages");
    again.abort();
    await within(relistening, "listen() to resolve");
    // Given back published again (so that they are not counted as handed
    // out, see delivery.ts), behind any the listener had not received yet.
    assertEquals(rest.sort((a, b) => a - b), [1, 2, 3, 4]);
  });
});

test("AmqpMessageQueue rejects a negative delay naming the delay option", async () => {
  await withQueue({}, async (queue) => {
    await assertRejects(() => queue.enqueue("x", { delay: { seconds: -1 } }), RangeError, "delay");
  });
});

test("AmqpMessageQueue keeps listening after the broker closes the listener's connection", async () => {
  await withQueue({}, async (queue, controller) => {
    const received: string[] = [];
    const first = deferred();
    const second = deferred();
    void queue.listen((message: string) => {
      received.push(message);
      if (message === "before") first.resolve();
      if (message === "after") second.resolve();
    }, { signal: controller.signal });
    await queue.enqueue("before");
    await within(first.promise, "the message before the drop");
    const closed = await closeConnectionsNamed(`fedwork ${queue.queue} listener`);
    assertEquals(closed, 1);
    await queue.enqueue("after");
    await within(second.promise, "the message after the drop");
    assertEquals(received.filter((m) => m === "after").length, 1);
  });
});

test("AmqpMessageQueue enqueues again after the broker closes the publisher's connection", async () => {
  await withQueue({}, async (queue, controller) => {
    const handled = deferred<string>();
    await queue.enqueue("warm-up");
    assertEquals(await closeConnectionsNamed(`fedwork ${queue.queue} publisher`), 1);
    try {
      await queue.enqueue("after");
    } catch (error) {
      // The close may not have reached the client yet: then the enqueue must
      // fail loudly, and the next one reconnects.
      assertInstanceOf(error, AmqpConnectionError);
      await queue.enqueue("after");
    }
    void queue.listen((message: string) => {
      if (message === "after") handled.resolve(message);
    }, { signal: controller.signal });
    assertEquals(await within(handled.promise, "the message"), "after");
  });
});

test("AmqpMessageQueue rejects an enqueue into a deleted queue, then declares it again", async () => {
  await withQueue({ orderingPartitions: 1 }, async (queue, controller) => {
    await queue.enqueue("first");
    // Another instance deletes the queues under the publisher's open channel.
    await using other = new AmqpMessageQueue({
      url: AMQP_URL,
      queue: queue.queue,
      orderingPartitions: 1,
    });
    await other.deleteQueues();
    await assertRejects(() => queue.enqueue("lost"), AmqpUnroutableMessageError);
    await queue.enqueue("second");
    const handled = deferred<string>();
    void queue.listen((message: string) => handled.resolve(message), {
      signal: controller.signal,
    });
    assertEquals(await within(handled.promise, "the message after the retry"), "second");
  });
});

test("AmqpMessageQueue delivers a delayed keyed message into its partition after the delay", async () => {
  await withQueue({ orderingPartitions: 2 }, async (queue, controller) => {
    const handled = deferred<number>();
    void queue.listen(() => handled.resolve(Date.now()), { signal: controller.signal });
    const start = Date.now();
    await queue.enqueue("keyed", { orderingKey: "k", delay: { milliseconds: 700 } });
    const at = await within(handled.promise, "the delayed keyed message");
    assert(at - start >= 650, `handled after ${at - start} ms`);
  });
});

test("AmqpMessageQueue runs up to concurrency handlers at once", async () => {
  await withQueue({ concurrency: 3 }, async (queue, controller) => {
    let running = 0;
    let maxRunning = 0;
    const allStarted = deferred();
    const release = deferred();
    let done = 0;
    const allDone = deferred();
    void queue.listen(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      if (running === 3) allStarted.resolve();
      await release.promise;
      running--;
      if (++done === 6) allDone.resolve();
    }, { signal: controller.signal });
    await queue.enqueueMany([1, 2, 3, 4, 5, 6]);
    await within(allStarted.promise, "three handlers to run at once");
    release.resolve();
    await within(allDone.promise, "all six messages");
    assertEquals(maxRunning, 3);
  });
});

test("AmqpMessageQueue never overlaps same-key messages even with concurrency", async () => {
  await withQueue({ concurrency: 4 }, async (queue, controller) => {
    let running = 0;
    let maxRunning = 0;
    const order: number[] = [];
    const all = deferred();
    void queue.listen(async (message: number) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(message);
      running--;
      if (order.length === 10) all.resolve();
    }, { signal: controller.signal });
    const messages = Array.from({ length: 10 }, (_, i) => i);
    await queue.enqueueMany(messages, { orderingKey: "same" });
    await within(all.promise, "ten messages");
    assertEquals(order, messages);
    assertEquals(maxRunning, 1);
  });
});

test("AmqpMessageQueue with nativeRetrial has the broker deliver a failed message again", async () => {
  await withQueue({ nativeRetrial: true }, async (queue, controller) => {
    assertEquals(queue.nativeRetrial, true);
    let attempts = 0;
    const succeeded = deferred<number>();
    void queue.listen(() => {
      attempts++;
      if (attempts < 3) throw new Error("Failing on purpose.");
      succeeded.resolve(attempts);
    }, { signal: controller.signal });
    await queue.enqueue("flaky");
    assertEquals(await within(succeeded.promise, "the third attempt"), 3);
  });
});

test("AmqpMessageQueue counts a message being handled as queued but not ready", async () => {
  await withQueue({}, async (queue, controller) => {
    const started = deferred();
    const release = deferred();
    void queue.listen(async () => {
      started.resolve();
      await release.promise;
    }, { signal: controller.signal });
    await queue.enqueue("slow");
    await within(started.promise, "the handler to start");
    assertEquals(await queue.getDepth(), { queued: 1, ready: 0, delayed: 0 });
    release.resolve();
  });
});

test("AmqpMessageQueue.deleteQueues() removes the main, partition and delay queues", async () => {
  const name = `fedwork-test-${crypto.randomUUID().slice(0, 12)}`;
  const queue = new AmqpMessageQueue({ url: AMQP_URL, queue: name, orderingPartitions: 2 });
  await queue.enqueue("x", { delay: { hours: 1 } });
  await queue.enqueue("y", { orderingKey: "k", delay: { minutes: 1 } });
  await queue.deleteQueues();
  await queue[Symbol.asyncDispose]();
  const listing = await rabbitmqctl("-q", "--no-table-headers", "list_queues", "name");
  assertEquals(listing.split("\n").filter((line) => line.includes(name)), []);
});

test("AmqpMessageQueue hands a thrown keyed message out again before the next one of its key", async () => {
  await withQueue({ redeliveryDelay: { milliseconds: 200 } }, async (queue, controller) => {
    const order: string[] = [];
    const done = deferred();
    void queue.listen((message: string) => {
      order.push(message);
      if (message === "first" && order.length === 1) throw new Error("Failing on purpose.");
      if (message === "second") done.resolve();
    }, { signal: controller.signal });
    await queue.enqueueMany(["first", "second"], { orderingKey: "k" });
    await within(done.promise, "the second message");
    assertEquals(order, ["first", "first", "second"]);
  });
});

test("AmqpMessageQueue gives a failing keyed message back to the broker at the hold limit", async () => {
  await withQueue({ keyedHoldLimit: { milliseconds: 1 } }, async (queue, controller) => {
    const deliveries: { message: string; at: number }[] = [];
    const done = deferred();
    void queue.listen((message: string) => {
      deliveries.push({ message, at: Date.now() });
      if (message === "first" && deliveries.length === 1) throw new Error("Failing on purpose.");
      if (message === "second") done.resolve();
    }, { signal: controller.signal });
    await queue.enqueueMany(["first", "second"], { orderingKey: "k" });
    await within(done.promise, "the second message");
    // Rejected with requeue, it stays at the head of its partition.
    assertEquals(deliveries.map((d) => d.message), ["first", "first", "second"]);
  });
});

test("AmqpMessageQueue publishes a keyed redelivery past the hold limit, which loses its place", async () => {
  await withQueue({ keyedHoldLimit: { milliseconds: 300 } }, async (queue, controller) => {
    const order: string[] = [];
    const done = deferred();
    void queue.listen(async (message: string, redelivery?: MessageRedelivery) => {
      order.push(message);
      if (message === "first") {
        await redelivery?.redeliver("first again", { delay: { milliseconds: 500 } });
      }
      if (message === "first again") done.resolve();
    }, { signal: controller.signal });
    await queue.enqueueMany(["first", "second"], { orderingKey: "k" });
    await within(done.promise, "the redelivered message");
    // "second" was already in the partition when the new version expired
    // out of the delay queue into it.
    assertEquals(order, ["first", "second", "first again"]);
  });
});
