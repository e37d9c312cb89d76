import { getLogger } from "@logtape/logtape";
import type { GetThroughputOptions, ThroughputBucket } from "../../processing/throughput.ts";
import type { MessageQueue, MessageQueueDepth } from "../../queue/message-queue.ts";
import { QUEUE_ROLES, type QueueRole } from "../../processing/queue-roles.ts";

const logger = getLogger(["fedwork", "federation"]);

/**
 * One queue of one role and how many messages it holds, as
 * `Federation.getQueueDepths()` lists them.
 * @since 0.2.0
 */
export interface QueueDepthEntry {
  /** The role the queue serves. */
  readonly role: QueueRole;
  /**
   * Which queue: the roles sharing the role's queue joined by `+` (e.g.
   * `"inbox"` or `"inbox+outbox+fanout+task"` for one queue serving every
   * role), or `task:` and the names of the tasks that have their own queue
   * (`defineTask(name, { queue })`), comma-separated; a task that needs
   * capabilities waits in a queue of its capability set, named like
   * `task:render (needs gpu)`.
   */
  readonly queue: string;
  /**
   * What the queue reports, or `undefined` when it has no `getDepth()` or
   * asking it failed (logged).  A queue serving several roles reports the
   * same depth under each.
   */
  readonly depth: MessageQueueDepth | undefined;
}

/**
 * What the operator's dashboard reads from a federation: queue depths and
 * recent throughput.  `Federation` has these methods.
 * @since 0.2.0
 */
export interface QueueMonitoring {
  /**
   * Asks every queue of the federation how many messages it holds: one
   * entry per role that has a queue (tasks running on the outbox queue by
   * fallback count as the task role's), plus one per queue of tasks that
   * have their own and one per queue of tasks needing capabilities.  Each
   * distinct queue is asked once.
   * @returns The entries, in role order.
   * @example
   * ```ts
   * for (const { role, queue, depth } of await federation.getQueueDepths()) {
   *   console.log(role, queue, depth?.queued ?? "unknown");
   * }
   * ```
   */
  getQueueDepths(): Promise<QueueDepthEntry[]>;

  /**
   * Counts the messages that completed, failed for good, were retried or
   * were dropped, per minute, summed over every worker process sharing
   * the key–value store (each writes its counts there every few seconds;
   * this process's are always current).  Counts are kept for two hours.
   * @param options `minutes`: how many minutes back, the current one
   *                included (60 by default, at most 120).
   * @returns One bucket per minute, oldest first, zeros included.
   * @throws {RangeError} When `minutes` is not an integer from 1 to 120.
   * @example
   * ```ts
   * const buckets = await federation.getThroughput({ minutes: 15 });
   * const failed = buckets.reduce((sum, bucket) => sum + bucket.failed, 0);
   * ```
   */
  getThroughput(options?: GetThroughputOptions): Promise<ThroughputBucket[]>;
}

/**
 * One distinct queue of a federation, with the roles it serves and its
 * label in {@link QueueDepthEntry.queue}.  Internal.
 * @since 0.4.0
 */
export interface LabelledQueue {
  /** The label: the roles sharing it joined by `+`, or `task:` and task names. */
  readonly label: string;
  /** The roles it serves (`task` for a queue of tasks' own). */
  readonly roles: readonly QueueRole[];
  /** The queue. */
  readonly queue: MessageQueue;
}

/**
 * Lists the distinct queues of a federation: those of the roles, in role
 * order, then those of tasks that have their own.  Internal.
 * @param queues The role queues.
 * @param taskQueues The tasks that have their own queue, by name.
 * @param fallback The queue tasks use when there is no task queue (the
 *                 outbox queue with the `"fallback"` resolution).
 * @returns The queues, each once.
 * @since 0.4.0
 */
export function labelQueues(
  queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>,
  taskQueues: ReadonlyMap<string, MessageQueue>,
  fallback: MessageQueue | undefined,
): LabelledQueue[] {
  const rolesOf = new Map<MessageQueue, QueueRole[]>();
  for (const role of QUEUE_ROLES) {
    const queue = queues[role] ?? (role === "task" ? fallback : undefined);
    if (queue == null) continue;
    const roles = rolesOf.get(queue);
    if (roles == null) rolesOf.set(queue, [role]);
    else roles.push(role);
  }
  const ownQueues = new Map<MessageQueue, string[]>();
  for (const [name, queue] of taskQueues) {
    if (rolesOf.has(queue)) continue;
    const names = ownQueues.get(queue);
    if (names == null) ownQueues.set(queue, [name]);
    else names.push(name);
  }
  const labelled: LabelledQueue[] = [];
  for (const [queue, roles] of rolesOf) labelled.push({ label: roles.join("+"), roles, queue });
  for (const [queue, names] of ownQueues) {
    labelled.push({ label: `task:${names.sort().join(",")}`, roles: ["task"], queue });
  }
  return labelled;
}

/**
 * Lists the queues of each role and asks each distinct one for its depth.
 * Internal.
 * @param queues The role queues.
 * @param taskQueues The tasks that have their own queue, by name.
 * @param fallback The queue tasks use when there is no task queue (the
 *                 outbox queue with the `"fallback"` resolution).
 * @returns The entries.
 * @since 0.2.0
 */
export async function collectQueueDepths(
  queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>,
  taskQueues: ReadonlyMap<string, MessageQueue>,
  fallback: MessageQueue | undefined,
): Promise<QueueDepthEntry[]> {
  const labelled = labelQueues(queues, taskQueues, fallback);
  const depths = new Map(labelled.map(({ queue }) => [queue, askDepth(queue)]));
  const entries: Promise<QueueDepthEntry>[] = [];
  // One entry per role, in role order, then one per queue of tasks' own.
  for (const role of QUEUE_ROLES) {
    const found = labelled.find((entry) =>
      entry.roles.includes(role) && !entry.label.startsWith("task:")
    );
    if (found == null) continue;
    entries.push(depths.get(found.queue)!.then((depth) => ({ role, queue: found.label, depth })));
  }
  for (const { label, queue } of labelled) {
    if (!label.startsWith("task:")) continue;
    entries.push(
      depths.get(queue)!.then((depth) => ({ role: "task" as const, queue: label, depth })),
    );
  }
  return await Promise.all(entries);
}

async function askDepth(queue: MessageQueue): Promise<MessageQueueDepth | undefined> {
  if (typeof queue.getDepth !== "function") return undefined;
  try {
    return await queue.getDepth();
  } catch (error) {
    logger.warn("A queue could not tell its depth: {error}", { error });
    return undefined;
  }
}
