import type { MessageQueue } from "../queue/message-queue.ts";
import { TaskQueueNotConfiguredError } from "./errors.ts";

/**
 * The federation's queues and policy that {@link resolveTaskQueue} picks
 * from.
 * @since 0.1.0
 */
export interface TaskQueueRoutingOptions {
  /** The federation's task queue (`queue: { task }`), if any. */
  readonly taskQueue?: MessageQueue;
  /** The federation's outbox queue, if any. */
  readonly outboxQueue?: MessageQueue;
  /**
   * `"fallback"` lets tasks use the outbox queue when there is no task
   * queue; `"strict"` does not.
   */
  readonly resolution: "fallback" | "strict";
}

/**
 * Picks the queue a task is enqueued into: the task's own queue, else the
 * federation's task queue, else (unless the resolution is `"strict"`) its
 * outbox queue.
 * @param task The task's name and its own queue, if any.
 * @param options The federation's queues and resolution policy.
 * @returns The queue.
 * @throws {TaskQueueNotConfiguredError} When no queue applies; the message
 *         names the task and says how to configure a queue.
 * @since 0.1.0
 */
export function resolveTaskQueue(
  task: { readonly name: string; readonly queue?: MessageQueue },
  options: TaskQueueRoutingOptions,
): MessageQueue {
  if (task.queue != null) return task.queue;
  if (options.taskQueue != null) return options.taskQueue;
  const strict = options.resolution === "strict";
  if (!strict && options.outboxQueue != null) return options.outboxQueue;
  throw new TaskQueueNotConfiguredError(task.name, strict);
}
