import type { MessageQueue } from "../queue/message-queue.ts";

/**
 * The roles a queue can serve in a federation, in the order workers start.
 * Adding a role means adding it here, to {@link FederationQueueOptions} and
 * registering a message handler for its message type.
 * @since 0.1.0
 */
export const QUEUE_ROLES = ["inbox", "outbox", "fanout", "task"] as const;

/**
 * One of {@link QUEUE_ROLES}.
 * @since 0.1.0
 */
export type QueueRole = typeof QUEUE_ROLES[number];

/**
 * A queue per role, for the `queue` option of `createFederation()`.  Roles
 * left out have no queue: received activities are processed in the request
 * (inbox), `sendActivity()` delivers before it returns (outbox), fan-out is
 * skipped (fanout), and tasks follow the task queue resolution (task).
 * @since 0.1.0
 */
export interface FederationQueueOptions {
  /** The queue for received activities. */
  readonly inbox?: MessageQueue;
  /** The queue for outgoing deliveries, one message per inbox. */
  readonly outbox?: MessageQueue;
  /** The queue for fan-out messages (one activity to many inboxes). */
  readonly fanout?: MessageQueue;
  /** The queue for typed background tasks. */
  readonly task?: MessageQueue;
}

/**
 * The queue of each role when one queue is given for every role: that
 * queue for all of them, or, when it sets `separateRoles`, a sibling of
 * its own for each role but the inbox (see `MessageQueue.separateRoles`).
 * @param queue The queue given.
 * @returns The queue of each role.
 * @since 0.4.0
 */
export function queuesOfOneQueue(queue: MessageQueue): Record<QueueRole, MessageQueue> {
  if (queue.separateRoles !== true || typeof queue.derive !== "function") {
    return { inbox: queue, outbox: queue, fanout: queue, task: queue };
  }
  return {
    inbox: queue,
    outbox: queue.derive("outbox"),
    fanout: queue.derive("fanout"),
    task: queue.derive("task"),
  };
}

/**
 * Tells whether a value looks like a {@link MessageQueue}.
 * @param value Any value.
 * @returns `true` when it has `enqueue` and `listen` methods.
 * @since 0.1.0
 */
export function isMessageQueue(value: unknown): value is MessageQueue {
  return typeof value === "object" && value != null &&
    typeof (value as MessageQueue).enqueue === "function" &&
    typeof (value as MessageQueue).listen === "function";
}

/**
 * Groups roles by the queue object serving them, so that a queue serving
 * several roles is listened to once.
 * @param queues The queue of each role.
 * @param roles The roles to include.
 * @returns Each distinct queue with the roles it serves, in role order.
 * @since 0.1.0
 */
export function groupRolesByQueue(
  queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>,
  roles: readonly QueueRole[],
): Map<MessageQueue, QueueRole[]> {
  const groups = new Map<MessageQueue, QueueRole[]>();
  for (const role of roles) {
    const queue = queues[role];
    if (queue == null) continue;
    const group = groups.get(queue);
    if (group == null) groups.set(queue, [role]);
    else group.push(role);
  }
  return groups;
}
