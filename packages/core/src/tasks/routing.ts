import type { MessageQueue } from "../queue/message-queue.ts";
import { TaskDefinitionError, TaskQueueNotConfiguredError } from "./errors.ts";

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
  task: {
    readonly name: string;
    readonly queue?: MessageQueue;
    readonly capabilities?: readonly string[];
  },
  options: TaskQueueRoutingOptions,
): MessageQueue {
  const base = resolveBaseTaskQueue(task, options);
  const capabilities = task.capabilities ?? [];
  return capabilities.length === 0 ? base : capabilityQueue(base, capabilities, task.name);
}

/**
 * The task's queue before capability routing: its own queue, else the
 * federation's task queue, else its outbox queue (unless strict).
 * @param task The task's name and its own queue, if any.
 * @param options The federation's queues and resolution policy.
 * @returns The queue.
 * @throws {TaskQueueNotConfiguredError} When no queue applies.
 * @since 0.2.0
 */
export function resolveBaseTaskQueue(
  task: { readonly name: string; readonly queue?: MessageQueue },
  options: TaskQueueRoutingOptions,
): MessageQueue {
  if (task.queue != null) return task.queue;
  if (options.taskQueue != null) return options.taskQueue;
  const strict = options.resolution === "strict";
  if (!strict && options.outboxQueue != null) return options.outboxQueue;
  throw new TaskQueueNotConfiguredError(task.name, strict);
}

const derived = new WeakMap<MessageQueue, Map<string, MessageQueue>>();

/**
 * The channel name of a capability set, as passed to
 * {@link MessageQueue.derive}: `cap_`, the capabilities reduced to
 * lowercase letters, digits and underscores (shortened), and a hash of the
 * exact set, so that distinct sets never share a channel.  At most 40
 * characters.
 * @param capabilities The capabilities, sorted and without duplicates.
 * @returns The channel.
 * @since 0.2.0
 */
export function capabilityChannel(capabilities: readonly string[]): string {
  const readable = capabilities.join("_").toLowerCase().replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "").slice(0, 26);
  // FNV-1a, 32 bits: enough to tell a deployment's few capability sets apart.
  let hash = 0x811c9dc5;
  for (const char of capabilities.join("\n")) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  const suffix = hash.toString(16).padStart(8, "0");
  return readable === "" ? `cap_${suffix}` : `cap_${readable}_${suffix}`;
}

/**
 * The sibling of `base` that tasks needing `capabilities` go to, derived
 * once per queue and capability set (the same object every time).
 * @param base The task's queue before routing.
 * @param capabilities The capabilities, sorted and without duplicates.
 * @param taskName The task's name, for the error.
 * @returns The sibling queue.
 * @throws {TypeError} When `base` has no `derive()` method; the message
 *         names the `capabilities` option.
 * @since 0.2.0
 */
export function capabilityQueue(
  base: MessageQueue,
  capabilities: readonly string[],
  taskName: string,
): MessageQueue {
  const channel = capabilityChannel(capabilities);
  let siblings = derived.get(base);
  const cached = siblings?.get(channel);
  if (cached != null) return cached;
  if (typeof base.derive !== "function") {
    throw new TypeError(
      `The task ${JSON.stringify(taskName)} has the capabilities option, which needs a ` +
        `queue with a derive() method to route it to capable workers; its queue (a ` +
        `${base.constructor?.name ?? "queue"}) has none.  Use a Fedwork queue, or drop the ` +
        "capabilities option.",
    );
  }
  const queue = base.derive(channel);
  if (siblings == null) derived.set(base, siblings = new Map());
  siblings.set(channel, queue);
  return queue;
}

/**
 * Tells whether a worker with `available` capabilities can run a task
 * that needs `required`.
 * @param required What the task needs.
 * @param available What the worker has.
 * @returns Whether every required capability is available.
 * @since 0.2.0
 */
export function satisfiesCapabilities(
  required: readonly string[],
  available: ReadonlySet<string>,
): boolean {
  return required.every((capability) => available.has(capability));
}

/**
 * The queue a task's messages go to, or `undefined` when none applies
 * (where {@link resolveTaskQueue} would throw).
 * @param task The task's name and queue (and capabilities).
 * @param routing The federation's queues and resolution.
 * @returns The queue, or `undefined`.
 * @since 0.4.0
 */
export function taskQueueOf(
  task: { readonly name: string; readonly queue?: MessageQueue },
  routing: TaskQueueRoutingOptions,
): MessageQueue | undefined {
  try {
    return resolveTaskQueue(task, routing);
  } catch {
    return undefined;
  }
}

/**
 * Throws when a task needs capabilities but its queue cannot derive the
 * sibling queue they are routed through.  A task without a queue passes:
 * enqueueing reports the missing queue.
 * @param name The task's name.
 * @param capabilities The task's `capabilities` option, unchecked.
 * @param queue The task's own queue, if any.
 * @param routing The federation's queues and resolution.
 * @throws {TaskDefinitionError} When the queue has no `derive()`.
 * @since 0.4.0
 */
export function checkCapabilityQueue(
  name: string,
  capabilities: unknown,
  queue: MessageQueue | undefined,
  routing: TaskQueueRoutingOptions,
): void {
  if (!Array.isArray(capabilities) || capabilities.length === 0) return;
  let base: MessageQueue;
  try {
    base = resolveBaseTaskQueue({ name, queue }, routing);
  } catch {
    return; // Enqueueing reports the missing queue.
  }
  if (typeof base.derive !== "function") {
    throw new TaskDefinitionError(
      name,
      "capabilities",
      `The capabilities option of the task ${JSON.stringify(name)} needs a queue with a ` +
        `derive() method, through which tasks reach capable workers; its queue (a ` +
        `${base.constructor?.name ?? "queue"}) has none.`,
    );
  }
}
