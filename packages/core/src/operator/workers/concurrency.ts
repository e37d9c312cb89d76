// How many messages a worker runs at once on a queue, for listWorkers():
// the queues Fedwork ships say it in different ways.
import type { MessageQueue } from "../../queue/message-queue.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { ParallelMessageQueue } from "../../queue/parallel-message-queue.ts";

/**
 * How many messages one `listen()` call on `queue` handles at once: the
 * queue's numeric `concurrency` property (the durable backends' option),
 * 1 for an {@link InProcessMessageQueue} (which awaits each handler), and
 * for a {@link ParallelMessageQueue} its `workers` times the inner queue's.
 * @param queue The queue a worker listens to.
 * @returns The number, or `null` when the queue does not tell.
 * @since 0.3.0
 */
export function queueConcurrency(queue: MessageQueue): number | null {
  const value = (queue as { readonly concurrency?: unknown }).concurrency;
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value;
  if (queue instanceof InProcessMessageQueue) return 1;
  if (queue instanceof ParallelMessageQueue) {
    const inner = queueConcurrency(queue.queue);
    return inner == null ? null : queue.workers * inner;
  }
  return null;
}
