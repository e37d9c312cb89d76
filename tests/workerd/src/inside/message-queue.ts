// What of the message-queue conformance suite (testMessageQueue() in
// @fedwork/testing) applies to WorkersMessageQueue, run inside the Worker:
// messages go out through its real Cloudflare queue binding and come back
// to this same Worker's queue() consumer.
//
// Applies, and is tested here: an enqueued object arrives as a deep-equal
// copy; enqueueMany() delivers every message; a delayed message does not
// arrive before its delay and does not hold back one enqueued after it; a
// priority is refused, since Cloudflare Queues has none.
//
// Left out, since the suite drives them through listen(), which Cloudflare
// Queues has not (it pushes batches to queue(), handed to
// processQueueBatch()): aborting listen(), competing listeners, a throwing
// handler's redelivery (processQueueBatch()'s retry, tested in
// federation.ts), leases, prefetch and crash recovery.  Ordering keys
// (Cloudflare does not keep them across batches), getDepth() (no depth
// without the REST API) and native deduplication are not offered; see
// WorkersMessageQueue's documentation.
import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { WorkersMessageQueue } from "@fedwork/cfworkers";
import type { MessageQueue } from "@fedwork/core";
import { consumeQueue, workerEnv } from "../harness/bindings.ts";

// How long a message may take to come back through Miniflare's queue;
// generous, it only bounds a message that never comes.
const ARRIVAL_TIMEOUT_MS = 30_000;

interface Tagged {
  readonly run: string;
  readonly [key: string]: unknown;
}

/**
 * Consumes the Worker's queue until `count` messages of this run arrived,
 * recording each with the time it arrived.
 */
function collect(run: string, count: number) {
  const arrived: { body: Tagged; at: number }[] = [];
  const done = deferred<void>();
  const consumer = consumeQueue((batch) => {
    for (const message of batch.messages) {
      const body = message.body as Tagged;
      if (body?.run === run) arrived.push({ body, at: Date.now() });
      message.ack();
    }
    if (arrived.length >= count) done.resolve();
    return Promise.resolve();
  });
  return {
    arrived,
    wait: () => within(done.promise, `${count} messages of run ${run}`, ARRIVAL_TIMEOUT_MS),
    [Symbol.dispose]: () => consumer[Symbol.dispose](),
  };
}

test("WorkersMessageQueue inside workerd: an enqueued object arrives as a deep-equal copy", async () => {
  const run = crypto.randomUUID();
  using messages = collect(run, 1);
  const sent = {
    run,
    text: "héllo 👋",
    number: 1.5,
    nested: { list: [1, "two", null, { three: true }] },
  };
  await new WorkersMessageQueue(workerEnv().QUEUE).enqueue(sent);
  await messages.wait();
  assertEquals(messages.arrived.map((m) => m.body), [sent]);
});

test("WorkersMessageQueue inside workerd: enqueueMany() delivers every message", async () => {
  const run = crypto.randomUUID();
  using messages = collect(run, 25);
  const sent = Array.from({ length: 25 }, (_, i) => ({ run, i }));
  await new WorkersMessageQueue(workerEnv().QUEUE).enqueueMany(sent);
  await messages.wait();
  assertEquals(
    messages.arrived.map((m) => m.body.i).sort((a, b) => +a! - +b!),
    sent.map((m) => m.i),
  );
});

test("WorkersMessageQueue inside workerd: a delayed message waits its delay and holds nothing back", async () => {
  const run = crypto.randomUUID();
  using messages = collect(run, 2);
  const queue = new WorkersMessageQueue(workerEnv().QUEUE);
  const enqueuedAt = Date.now();
  await queue.enqueue({ run, which: "delayed" }, { delay: { seconds: 2 } });
  await queue.enqueue({ run, which: "immediate" });
  await messages.wait();
  assertEquals(messages.arrived.map((m) => m.body.which), ["immediate", "delayed"]);
  const delayed = messages.arrived[1];
  // Cloudflare counts delays in whole seconds: the lower bound is exact.
  assert(
    delayed.at - enqueuedAt >= 2_000,
    `the delayed message arrived ${delayed.at - enqueuedAt} ms after it was enqueued`,
  );
});

test("WorkersMessageQueue inside workerd: a priority is refused, not ignored", async () => {
  const queue = new WorkersMessageQueue(workerEnv().QUEUE);
  assert((queue as MessageQueue).nativePriority !== true);
  await assertRejects(() => queue.enqueue({ run: "priority" }, { priority: 1 }));
  await assertRejects(() => queue.enqueueMany([{ run: "priority" }], { priority: -1 }));
});
