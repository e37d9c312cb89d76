// What the publisher does when the broker refuses (nacks) a message: a
// queue whose length limit rejects publishes is a real broker that nacks.
import { assertEquals, assertRejects, test } from "@fedify/fixture";
import amqp from "amqplib";
import { Buffer } from "node:buffer";
import { AmqpConnectionError } from "./errors.ts";
import { resolveAmqpOptions } from "./options.ts";
import { AmqpPublisher } from "./publisher.ts";
import { AMQP_URL } from "./testdata/conformance-factory.ts";

/** Declares a queue that holds one message and nacks publishes past it. */
async function declareFullQueue(channel: amqp.Channel): Promise<string> {
  const name = `fedwork-test-nack-${crypto.randomUUID().slice(0, 12)}`;
  await channel.assertQueue(name, {
    durable: false,
    autoDelete: false,
    arguments: { "x-max-length": 1, "x-overflow": "reject-publish" },
  });
  return name;
}

test("a message the broker keeps refusing rejects enqueue after a few tries", async () => {
  const connection = await amqp.connect(AMQP_URL);
  const channel = await connection.createChannel();
  const target = await declareFullQueue(channel);
  const publisher = new AmqpPublisher(
    resolveAmqpOptions({ url: AMQP_URL, queue: `${target}-main` }),
  );
  try {
    await publisher.publish([Buffer.from('"first"')], target, 0);
    const error = await assertRejects(
      () => publisher.publish([Buffer.from('"second"')], target, 0),
      AmqpConnectionError,
    );
    assertEquals(
      /refused \(nacked\) 1 message\(s\) 4 times/.test(error.message),
      true,
      error.message,
    );
    assertEquals((await channel.checkQueue(target)).messageCount, 1);
  } finally {
    await publisher.close();
    await channel.deleteQueue(target);
    await channel.deleteQueue(`${target}-main`);
    await connection.close();
  }
});

test("a refused message is published again once the broker takes it", async () => {
  const connection = await amqp.connect(AMQP_URL);
  const channel = await connection.createChannel();
  const target = await declareFullQueue(channel);
  const publisher = new AmqpPublisher(
    resolveAmqpOptions({ url: AMQP_URL, queue: `${target}-main` }),
  );
  try {
    await publisher.publish([Buffer.from('"first"')], target, 0);
    const second = publisher.publish([Buffer.from('"second"')], target, 0);
    // Make room while the publisher waits between its tries (the first
    // refusal comes back within milliseconds on loopback; the tries span
    // 350 ms).
    await new Promise((resolve) => setTimeout(resolve, 30));
    let taken: amqp.GetMessage | false = false;
    while (taken === false) {
      taken = await channel.get(target, { noAck: true });
    }
    assertEquals(taken.content.toString(), '"first"');
    await second;
    const next = await channel.get(target, { noAck: true });
    assertEquals(next === false ? null : next.content.toString(), '"second"');
  } finally {
    await publisher.close();
    await channel.deleteQueue(target);
    await channel.deleteQueue(`${target}-main`);
    await connection.close();
  }
});
