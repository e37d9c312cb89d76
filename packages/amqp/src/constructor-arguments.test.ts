import { assertEquals, assertRejects, assertThrows, deferred, test, within } from "@fedify/fixture";
import { UnknownOptionError } from "@fedwork/core";
import { connect } from "amqplib";
import { AmqpConnectionError } from "./errors.ts";
import { AmqpMessageQueue } from "./message-queue.ts";
import { AMQP_URL, cleanup } from "./testdata/conformance-factory.ts";

function testQueueName(): string {
  return `fedwork-ctor-${crypto.randomUUID().slice(0, 12)}`;
}

test("new AmqpMessageQueue(connection, options) carries messages on a borrowed connection and leaves it open", async () => {
  const name = testQueueName();
  const connection = await connect(AMQP_URL);
  connection.on("error", () => {});
  const queue = new AmqpMessageQueue(connection, {
    queue: name,
    durable: false,
    ordering: { partitions: 2 },
  });
  const controller = new AbortController();
  try {
    const received: unknown[] = [];
    const both = deferred<void>();
    const listening = queue.listen((message) => {
      received.push(message);
      if (received.length === 2) both.resolve();
    }, { signal: controller.signal });
    await queue.enqueue({ plain: 1 });
    await queue.enqueue({ keyed: 2 }, { orderingKey: "k" });
    await within(both.promise, "both messages");
    assertEquals(received.length, 2);
    controller.abort();
    await within(listening, "the listener to stop");
    await queue.deleteQueues();
    await queue[Symbol.asyncDispose]();
    // The connection is the caller's: still usable after the queue is gone.
    const channel = await connection.createChannel();
    await channel.close();
  } finally {
    controller.abort();
    await connection.close().catch(() => {});
    await cleanup(name).catch(() => {});
  }
});

test("An AmqpMessageQueue on a closed borrowed connection fails with a connection error", async () => {
  const connection = await connect(AMQP_URL);
  await connection.close();
  await using queue = new AmqpMessageQueue(connection, { queue: testQueueName() });
  await assertRejects(() => queue.enqueue("lost"), AmqpConnectionError, "connection passed in");
});

test("new AmqpMessageQueue() names what its first argument must be", () => {
  for (const value of [null, AMQP_URL, 5672, []]) {
    assertThrows(
      // @ts-expect-error: neither a connection nor options.
      () => new AmqpMessageQueue(value),
      TypeError,
      "new AmqpMessageQueue() takes an open amqplib connection",
    );
  }
  assertThrows(
    // @ts-expect-error: a connection is not a plain object.
    () => new AmqpMessageQueue({ connection: { close() {} } }),
    TypeError,
    "must be an open amqplib connection",
  );
});

test("new AmqpMessageQueue(connection, options) explains Fedify's options it does not take", async () => {
  const connection = await connect(AMQP_URL);
  try {
    const cases: [() => unknown, string][] = [
      [
        // @ts-expect-error: Fedify's option.
        () => new AmqpMessageQueue(connection, { delayedQueuePrefix: "d_" }),
        "<queue>.delay.<ms>",
      ],
      [
        // @ts-expect-error: Fedify's option.
        () => new AmqpMessageQueue(connection, { ordering: { exchange: "x" } }),
        "ordering.exchange",
      ],
      [
        () => new AmqpMessageQueue(connection, { url: AMQP_URL } as never),
        "the url option cannot come too",
      ],
      [
        () =>
          new AmqpMessageQueue(connection, { ordering: { partitions: 2 }, orderingPartitions: 2 }),
        "give one of them",
      ],
      [
        // @ts-expect-error: ordering is for Fedify's form only.
        () => new AmqpMessageQueue({ url: AMQP_URL, ordering: { partitions: 2 } }),
        "orderingPartitions",
      ],
      [
        () => new AmqpMessageQueue({ url: AMQP_URL, connection }),
        "not both",
      ],
    ];
    for (const [construct, advice] of cases) assertThrows(construct, TypeError, advice);
    const error = assertThrows(
      // @ts-expect-error: Fedify's option.
      () => new AmqpMessageQueue(connection, { delayedQueuePrefix: "d_" }),
      UnknownOptionError,
    );
    assertEquals(error.option, "delayedQueuePrefix");
  } finally {
    await connection.close();
  }
});
