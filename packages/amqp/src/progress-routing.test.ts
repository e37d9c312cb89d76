// Capability routing on RabbitMQ, with three federations each opening
// their own connections to the broker, as separate processes would.
// AMQP has no key–value store, so the federations share one in-memory
// store; the progress half of the suite (which needs a pub/sub transport
// across processes) runs on Redis and PostgreSQL.
import { MemoryKvStore } from "@fedwork/core";
import { capabilityChannel } from "@fedwork/core/queue-kit";
import { testTaskProgressAndRouting } from "@fedwork/testing";
import { cleanup, createQueue } from "./testdata/conformance-factory.ts";

const stores = new Map<string, MemoryKvStore>();

testTaskProgressAndRouting({
  name: "AmqpMessageQueue",
  open(namespace) {
    let kv = stores.get(namespace);
    if (kv == null) stores.set(namespace, kv = new MemoryKvStore());
    const queue = createQueue(namespace);
    return { queue, kv, dispose: () => queue[Symbol.asyncDispose]() };
  },
  async cleanup(namespace) {
    stores.delete(namespace);
    // The suite's capability sets: their sibling queues.
    for (const set of [["gpu"], ["ffmpeg"], ["ffmpeg", "gpu"]]) {
      await using queue = createQueue(namespace);
      await queue.derive(capabilityChannel(set)).deleteQueues();
    }
    await cleanup(namespace);
  },
  progress: false,
});
