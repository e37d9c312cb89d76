// Priorities on RabbitMQ: opt-in, because a priority queue needs an
// argument RabbitMQ cannot add to an existing queue.
import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { AmqpMessageQueue } from "./message-queue.ts";
import { AMQP_URL } from "./testdata/conformance-factory.ts";

function queueName(): string {
  return `fedwork-test-${crypto.randomUUID().slice(0, 12)}`;
}

test("AmqpMessageQueue without priorities refuses a priority instead of ignoring it", async () => {
  const name = queueName();
  await using queue = new AmqpMessageQueue({ url: AMQP_URL, queue: name });
  try {
    assertEquals(queue.nativePriority, false);
    const error = await assertRejects(
      () => queue.enqueue({ n: 1 }, { priority: 2 }),
      TypeError,
    );
    assert(error.message.includes("priorities: true"), error.message);
    // Priority 0 is what every queue does.
    await queue.enqueue({ n: 2 }, { priority: 0 });
  } finally {
    await queue.deleteQueues();
  }
});

test("AmqpMessageQueue says clearly when an existing queue was declared without priorities", async () => {
  const name = queueName();
  await using plain = new AmqpMessageQueue({ url: AMQP_URL, queue: name });
  try {
    await plain.enqueue({ n: 1 });
    await using prioritized = new AmqpMessageQueue({
      url: AMQP_URL,
      queue: name,
      priorities: true,
    });
    assertEquals(prioritized.nativePriority, true);
    const error = await assertRejects(() => prioritized.enqueue({ n: 2 }, { priority: 1 }));
    const message = (error as Error).message;
    assert(message.includes("x-max-priority"), message);
    assert(message.includes("delete"), message);
    // The existing queue and its message are untouched.
    assertEquals((await plain.getDepth()).ready, 1);
  } finally {
    await plain.deleteQueues();
  }
});
