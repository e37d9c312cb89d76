// Which queues a worker listens to for its roles: the federation's queue of
// each role and, with the task role, the queues tasks declared, the outbox
// queue tasks fall back to, and the sibling queues of the tasks whose
// capabilities the worker has.
import { groupRolesByQueue, type QueueRole } from "../processing/queue-roles.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RegisteredTask } from "./definition.ts";
import type { TaskStore } from "./registry.ts";
import {
  resolveTaskQueue,
  satisfiesCapabilities,
  type TaskQueueRoutingOptions,
} from "./routing.ts";

/**
 * The most capabilities a worker listens to every combination of (for
 * `enqueueTask()`'s per-task `capabilities`): 2⁶ − 1 = 63 sibling queues
 * per task queue.  A worker with more listens to each task's own set, and
 * that set joined with each single capability of the worker.
 */
const MAX_COMBINED_CAPABILITIES = 6;

/** Every non-empty combination of `capabilities` (see above for the bound). */
function combinationsOf(capabilities: readonly string[]): string[][] {
  if (capabilities.length > MAX_COMBINED_CAPABILITIES) {
    return capabilities.map((capability) => [capability]);
  }
  const result: string[][] = [];
  for (let mask = 1; mask < 1 << capabilities.length; mask++) {
    result.push(capabilities.filter((_, i) => (mask & (1 << i)) !== 0));
  }
  return result;
}

/**
 * The queues to listen to for the given roles, each with the roles it
 * serves.  With the `"task"` role, the queues tasks declared with
 * `defineTask(name, { queue })` are included under `"task"`.  Internal.
 * @param queues The federation's queue of each role.
 * @param routing The task queue, the outbox queue and the resolution.
 * @param tasks The registered tasks.
 * @param roles The roles.
 * @param capabilities The worker's capabilities: with the `"task"` role,
 *                     the sibling queues of the tasks they satisfy are
 *                     included too.
 * @returns The queues.
 * @since 0.4.0
 */
export function queuesForRoles(
  queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>,
  routing: TaskQueueRoutingOptions,
  // deno-lint-ignore no-explicit-any
  tasks: TaskStore<any, any>,
  roles: readonly QueueRole[],
  capabilities: ReadonlySet<string> = new Set(),
): Map<MessageQueue, QueueRole[]> {
  const groups = groupRolesByQueue(queues, roles);
  if (!roles.includes("task")) return groups;
  const fallback = routing.taskQueue == null && routing.resolution === "fallback"
    ? routing.outboxQueue
    : undefined;
  const add = (queue: MessageQueue) => {
    const group = groups.get(queue);
    if (group == null) groups.set(queue, ["task"]);
    else if (!group.includes("task")) group.push("task");
  };
  // Tasks without a task queue of their own run on the outbox queue.
  if (fallback != null) add(fallback);
  for (const [, queue] of taskQueuesOf(routing, tasks, capabilities)) add(queue);
  return groups;
}

/**
 * The batch size to listen to each task queue with
 * (`MessageQueueListenOptions.batchSize`): the largest `handleMany.size`
 * of the tasks routed to it, for the queues {@link queuesForRoles} lists
 * under `"task"`.  Queues with no `handleMany` task are left out.
 * Internal.
 * @param routing The task queue, the outbox queue and the resolution.
 * @param tasks The registered tasks.
 * @param capabilities The worker's capabilities.
 * @returns The batch size of each queue that has one.
 * @since 0.4.0
 */
export function batchSizesForQueues(
  routing: TaskQueueRoutingOptions,
  // deno-lint-ignore no-explicit-any
  tasks: TaskStore<any, any>,
  capabilities: ReadonlySet<string> = new Set(),
): Map<MessageQueue, number> {
  const sizes = new Map<MessageQueue, number>();
  for (const [task, queue] of taskQueuesOf(routing, tasks, capabilities)) {
    const size = task.many?.size;
    if (size != null && size > (sizes.get(queue) ?? 0)) sizes.set(queue, size);
  }
  // A task with neither a queue of its own nor capabilities runs on the
  // federation's task queue (or the outbox queue it falls back to).
  for (const name of tasks.names) {
    const task = tasks.get(name)!;
    const size = task.many?.size;
    if (size == null || task.queue != null || task.capabilities.length > 0) continue;
    let queue: MessageQueue;
    try {
      queue = resolveTaskQueue(task, routing);
    } catch {
      continue;
    }
    if (size > (sizes.get(queue) ?? 0)) sizes.set(queue, size);
  }
  return sizes;
}

/**
 * Each task this worker can run with each queue it listens to for it
 * besides the federation's task (or outbox) queue: the task's own queue,
 * and the sibling queues of the capability sets the worker satisfies.
 */
function* taskQueuesOf(
  routing: TaskQueueRoutingOptions,
  // deno-lint-ignore no-explicit-any
  tasks: TaskStore<any, any>,
  capabilities: ReadonlySet<string>,
  // deno-lint-ignore no-explicit-any
): Generator<[RegisteredTask<any, any>, MessageQueue]> {
  // Per-task capability sets this worker can run: the definition's own,
  // and (for enqueueTask()'s capabilities, added to the definition's)
  // the definition's joined with each combination of the worker's
  // other capabilities.
  const extra = combinationsOf([...capabilities].sort());
  for (const name of tasks.names) {
    const task = tasks.get(name)!;
    if (task.queue != null) yield [task, task.queue];
    if (!satisfiesCapabilities(task.capabilities, capabilities)) continue;
    // A task needing capabilities lives in a sibling queue, listened to
    // only by workers that have them all.
    if (task.capabilities.length > 0) yield [task, resolveTaskQueue(task, routing)];
    for (const combination of extra) {
      const set = [...new Set([...task.capabilities, ...combination])].sort();
      if (set.length === task.capabilities.length) continue;
      let queue: MessageQueue;
      try {
        queue = resolveTaskQueue({ ...task, capabilities: set }, routing);
      } catch {
        // A queue that cannot derive siblings has no per-task sets either.
        continue;
      }
      yield [task, queue];
    }
  }
}
