// The conformance factory for AmqpMessageQueue (see amqp-conformance.test.ts).
// The namespace is the main queue's name.  There is no lease: the broker
// redelivers a message as soon as the connection of the worker holding it is
// gone, and never while that connection lives.  `leaseMs` sets how long a
// message whose handler threw waits, as a lease would for other backends.
import process from "node:process";
import { AmqpMessageQueue } from "../message-queue.ts";
import { DEFAULT_AMQP_URL } from "../options.ts";

/** The broker the tests use: `AMQP_URL`, or RabbitMQ on loopback. */
export const AMQP_URL: string = process.env.AMQP_URL ?? DEFAULT_AMQP_URL;

/** A new instance, with its own connections, on the queue `namespace`. */
export function createQueue(
  namespace: string,
  options: { leaseMs?: number } = {},
): AmqpMessageQueue {
  return new AmqpMessageQueue({
    url: AMQP_URL,
    queue: namespace,
    orderingPartitions: 4,
    priorities: true,
    redeliveryDelay: { milliseconds: options.leaseMs ?? 1500 },
  });
}

/** Deletes every queue of `namespace`. */
export async function cleanup(namespace: string): Promise<void> {
  await using queue = createQueue(namespace);
  await queue.deleteQueues();
}
