// Test-only: enqueues tasks the way a federation does (prepare, the task
// enqueuer, the producer), without a federation.
import { trace } from "@opentelemetry/api";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { MessageProducer } from "../../processing/producer.ts";
import { type EnqueueTasksOptions, prepareTaskMessages } from "../enqueue.ts";
import { TaskEnqueuer } from "../enqueuer.ts";
import type { TaskMessage } from "../message.ts";

/**
 * Checks and enqueues one task message per payload through a
 * {@link TaskEnqueuer} and a {@link MessageProducer} with no metrics, no
 * status records and no workers to start.
 * @param options The task, the payloads, the queues and the base URL.
 * @returns The messages as they were handed to the queue.
 */
export async function enqueueTasks<TContextData>(
  options: EnqueueTasksOptions<TContextData>,
): Promise<TaskMessage[]> {
  const prepared = await prepareTaskMessages(options);
  const sent: TaskMessage[] = [];
  const enqueuer = new TaskEnqueuer<TContextData>({
    kv: new MemoryKvStore(),
    deduplicationTtlMs: 60_000,
    producer: new MessageProducer({
      tracer: trace.getTracer("fedwork-test"),
      metrics: { recordEnqueued: () => {} },
    }),
    status: {
      queued: (messages) => {
        sent.push(...messages);
        return Promise.resolve();
      },
      forget: () => Promise.resolve(),
    },
    metrics: { recordDeduplicated: () => {}, recordThrottled: () => {} },
  });
  await enqueuer.enqueue(prepared);
  return sent;
}
