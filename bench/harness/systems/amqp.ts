// RabbitMQ: Fedwork's AmqpMessageQueue and raw amqplib at the same
// prefetch.  Each system has queues of its own (`fedwork-bench-<system>`),
// deleted before every measurement.
import { AmqpMessageQueue } from "@fedwork/amqp";
import { type Channel, type ChannelModel, connect } from "amqplib";
import process from "node:process";
import type { Driver, Payload } from "../driver.ts";
import type { QueueSource } from "./fedwork.ts";

const AMQP_URL = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";

/** Deletes `names` (missing queues are fine), each on its own channel. */
async function deleteQueues(names: readonly string[]): Promise<void> {
  const connection = await connect(AMQP_URL);
  try {
    for (const name of names) {
      const channel = await connection.createChannel();
      try {
        await channel.deleteQueue(name);
        await channel.close();
      } catch {
        // A channel closed by the broker; the queue was not there.
      }
    }
  } finally {
    await connection.close();
  }
}

// AmqpMessageQueue's defaults, passed explicitly so that the bench knows
// which queues to delete and gives raw amqplib the same prefetch without
// reaching into the package's internals.
const ORDERING_PARTITIONS = 16;
/** The prefetch AmqpMessageQueue uses by default at `concurrency`. */
function prefetchFor(concurrency: number): number {
  return Math.min(65535, Math.max(16, 2 * concurrency));
}

/** Every queue Fedwork declares for `name`. */
function fedworkQueueNames(name: string): string[] {
  return [name, ...Array.from({ length: ORDERING_PARTITIONS }, (_, i) => `${name}.ordered.${i}`)];
}

/** AmqpMessageQueue instances on queue `name`, with default options. */
export function fedworkAmqpSource(name: string): QueueSource {
  const open: AmqpMessageQueue[] = [];
  let producer: AmqpMessageQueue | undefined;
  const track = (queue: AmqpMessageQueue) => (open.push(queue), queue);
  const closeAll = async () => {
    producer = undefined;
    await Promise.all(open.splice(0).map((q) => q[Symbol.asyncDispose]()));
  };
  return {
    async reset() {
      await closeAll();
      await deleteQueues(fedworkQueueNames(name));
    },
    producer: () =>
      producer ??= track(
        new AmqpMessageQueue({
          url: AMQP_URL,
          queue: name,
          orderingPartitions: ORDERING_PARTITIONS,
          // Priority queues only when measuring priorities (fedwork.ts).
          priorities: process.env.FEDWORK_BENCH_PRIORITY === "1",
        }),
      ),
    consumer: (concurrency) =>
      track(
        new AmqpMessageQueue({
          url: AMQP_URL,
          queue: name,
          concurrency,
          prefetch: prefetchFor(concurrency),
          orderingPartitions: ORDERING_PARTITIONS,
          // Priority queues only when measuring priorities (fedwork.ts).
          priorities: process.env.FEDWORK_BENCH_PRIORITY === "1",
        }),
      ),
    close: closeAll,
  };
}

/**
 * Raw amqplib doing what Fedwork's queue does for an unkeyed message: a
 * durable queue, persistent messages published on a confirm channel, and a
 * consumer acknowledging each message after its handler, with the prefetch
 * Fedwork's AmqpMessageQueue uses by default at the same concurrency.
 */
export function amqplibDriver(name: string): Driver {
  let connection: ChannelModel | undefined;
  let publisher: Awaited<ReturnType<ChannelModel["createConfirmChannel"]>> | undefined;
  const publisherFor = async () => {
    connection ??= await connect(AMQP_URL);
    if (publisher == null) {
      publisher = await connection.createConfirmChannel();
      await publisher.assertQueue(name, { durable: true });
    }
    return publisher;
  };
  const publish = (channel: NonNullable<typeof publisher>, payload: Payload) =>
    channel.sendToQueue(name, Buffer.from(JSON.stringify(payload)), {
      persistent: true,
      contentType: "application/json",
    });
  return {
    async reset() {
      await publisher?.close();
      publisher = undefined;
      await deleteQueues([name]);
    },
    async enqueueBulk(payloads, chunk) {
      const channel = await publisherFor();
      for (let i = 0; i < payloads.length; i += chunk) {
        for (const payload of payloads.slice(i, i + chunk)) publish(channel, payload);
        await channel.waitForConfirms();
      }
    },
    async enqueueOne(payload) {
      const channel = await publisherFor();
      await new Promise<void>((resolve, reject) => {
        channel.sendToQueue(
          name,
          Buffer.from(JSON.stringify(payload)),
          { persistent: true, contentType: "application/json" },
          (error) => error == null ? resolve() : reject(error),
        );
      });
    },
    async work(concurrency, handler) {
      const prefetch = prefetchFor(concurrency);
      const consumerConnection = await connect(AMQP_URL);
      const channel: Channel = await consumerConnection.createChannel();
      await channel.assertQueue(name, { durable: true });
      await channel.prefetch(prefetch);
      const { consumerTag } = await channel.consume(name, (message) => {
        if (message == null) return;
        handler(JSON.parse(message.content.toString()) as Payload);
        channel.ack(message);
      });
      return {
        async stop() {
          await channel.cancel(consumerTag);
          await channel.close();
          await consumerConnection.close();
        },
      };
    },
    async close() {
      await publisher?.close();
      await connection?.close();
    },
  };
}
