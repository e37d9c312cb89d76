// The conformance factory for AmqpMessageQueue on quorum queues (see
// quorum-conformance.test.ts): the same as conformance-factory.ts, but every
// queue is a quorum queue, and so without priorities, which RabbitMQ 3.x
// does not offer on quorum queues.
import { AmqpMessageQueue } from "../message-queue.ts";
import { AMQP_URL } from "./conformance-factory.ts";

/** A new instance on quorum queues, with its own connections. */
export function createQueue(
  namespace: string,
  options: { leaseMs?: number } = {},
): AmqpMessageQueue {
  return new AmqpMessageQueue({
    url: AMQP_URL,
    queue: namespace,
    queueType: "quorum",
    orderingPartitions: 4,
    redeliveryDelay: { milliseconds: options.leaseMs ?? 1500 },
  });
}

/** Deletes every queue of `namespace`. */
export async function cleanup(namespace: string): Promise<void> {
  await using queue = createQueue(namespace);
  await queue.deleteQueues();
}
