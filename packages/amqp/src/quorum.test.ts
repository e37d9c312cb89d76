// The queueType option: what is declared, and what is refused before any
// connection is opened.
import { assert, assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { execFile } from "node:child_process";
import { AmqpMessageQueue } from "./message-queue.ts";
import type { AmqpMessageQueueOptions } from "./options.ts";
import { AMQP_URL } from "./testdata/conformance-factory.ts";

/** The type of every queue whose name starts with `prefix`, by name. */
function queueTypes(prefix: string): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(
      "rabbitmqctl",
      ["-q", "--no-table-headers", "list_queues", "name", "type"],
      (error, stdout) => {
        if (error) return reject(error);
        const types = new Map<string, string>();
        for (const line of stdout.split("\n")) {
          const [name, type] = line.split("\t");
          if (name?.startsWith(prefix)) types.set(name, type);
        }
        resolve(types);
      },
    );
  });
}

function queueName(): string {
  return `fedwork-test-${crypto.randomUUID().slice(0, 12)}`;
}

test("AmqpMessageQueue refuses an unknown queueType, suggesting the one meant", () => {
  const error = assertThrows(
    () =>
      new AmqpMessageQueue({
        url: AMQP_URL,
        queueType: "quorom",
      } as unknown as AmqpMessageQueueOptions),
    TypeError,
  );
  assert(error.message.startsWith("queueType must be"), error.message);
  assert(error.message.includes('did you mean "quorum"?'), error.message);
  const other = assertThrows(
    () =>
      new AmqpMessageQueue({
        url: AMQP_URL,
        queueType: "stream",
      } as unknown as AmqpMessageQueueOptions),
    TypeError,
  );
  assert(!other.message.includes("did you mean"), other.message);
});

test("AmqpMessageQueue refuses quorum queues with priorities or durable: false", () => {
  const priorities = assertThrows(
    () => new AmqpMessageQueue({ url: AMQP_URL, queueType: "quorum", priorities: true }),
    RangeError,
  );
  assert(priorities.message.includes("priorities"), priorities.message);
  assert(priorities.message.includes("quorum"), priorities.message);
  const durable = assertThrows(
    () => new AmqpMessageQueue({ url: AMQP_URL, queueType: "quorum", durable: false }),
    RangeError,
  );
  assert(durable.message.includes("durable"), durable.message);
});

test("AmqpMessageQueue with queueType quorum declares quorum queues, delay queues too", async () => {
  const name = queueName();
  await using queue = new AmqpMessageQueue({
    url: AMQP_URL,
    queue: name,
    queueType: "quorum",
    orderingPartitions: 2,
  });
  try {
    await queue.enqueue({ n: 1 });
    await queue.enqueue({ n: 2 }, { orderingKey: "k" });
    await queue.enqueue({ n: 3 }, { delay: { seconds: 30 } });
    const types = await queueTypes(name);
    assertEquals(types.get(name), "quorum");
    assertEquals(types.get(`${name}.ordered.0`), "quorum");
    assertEquals(types.get(`${name}.ordered.1`), "quorum");
    assertEquals(types.get(`${name}.delay.32768`), "quorum");
    const depth = await queue.getDepth();
    assertEquals(depth.ready, 2);
    assertEquals(depth.delayed, 1);
  } finally {
    await queue.deleteQueues();
  }
});

test("AmqpMessageQueue says clearly when an existing queue has another queue type", async () => {
  const name = queueName();
  await using classic = new AmqpMessageQueue({ url: AMQP_URL, queue: name });
  try {
    await classic.enqueue({ n: 1 });
    await using quorum = new AmqpMessageQueue({ url: AMQP_URL, queue: name, queueType: "quorum" });
    const error = await assertRejects(() => quorum.getDepth());
    const message = (error as Error).message;
    assert(message.includes("queue type"), message);
    assert(message.includes('"quorum"'), message);
    assertEquals((await classic.getDepth()).ready, 1);
  } finally {
    await classic.deleteQueues();
  }
});
