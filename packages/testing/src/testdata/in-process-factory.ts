// The conformance factory for InProcessMessageQueue, used by
// ../in-process.test.ts.  An in-process queue cannot be shared between two
// instances, so "a new instance attached to the namespace" is emulated by
// handing out the one queue kept for that namespace: several listen() calls
// on one InProcessMessageQueue compete for its messages, which is exactly
// what two instances of a shared backend do.
import { InProcessMessageQueue, type MessageQueue } from "@fedwork/core";

const queues = new Map<string, InProcessMessageQueue>();

/** Returns the queue kept for `namespace`, creating it on first use. */
export function createQueue(namespace: string): MessageQueue {
  let queue = queues.get(namespace);
  if (queue == null) {
    queue = new InProcessMessageQueue();
    queues.set(namespace, queue);
  }
  return queue;
}

/** Forgets the queue kept for `namespace`. */
export async function cleanup(namespace: string): Promise<void> {
  const queue = queues.get(namespace);
  queues.delete(namespace);
  await queue?.[Symbol.asyncDispose]();
}
