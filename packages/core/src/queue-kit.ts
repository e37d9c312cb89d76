/**
 * Building blocks for message-queue backends that lease messages (a claimed
 * message stays invisible to other workers while a heartbeat renews its
 * lease): the shared listen loop with prefetch and batched
 * acknowledgements, the option checks, and the closed-queue error.  Fedwork's
 * SQLite and PostgreSQL queues are built on it.  It also holds what every
 * backend shares whatever its engine: the channel and topic checks, the
 * topic listener table of a pub/sub transport, and the channel name a set
 * of task capabilities routes to.
 *
 * ```ts
 * import { resolveLeaseOptions, runLeaseListener } from "@fedwork/core/queue-kit";
 * ```
 * @module
 * @since 0.2.0
 */
export {
  type LeaseClaimRequest,
  type LeaseClaimResult,
  type LeasedMessage,
  type LeaseEngine,
  type LeaseListenerOptions,
  runLeaseListener,
} from "./queue/lease-listener.ts";
export {
  type LeaseOptionDefaults,
  type LeaseOptionsInput,
  type ResolvedLeaseOptions,
  resolveLeaseOptions,
} from "./queue/lease-options.ts";
export {
  nonNegativeIntegerOption,
  positiveDurationOption,
  positiveIntegerOption,
} from "./options/value-options.ts";
export { assertKnownOptions, type KnownOptionsContext } from "./options/known-options.ts";
export { listenBatchSize } from "./queue/listen-options.ts";
export { ProcessWakeups } from "./queue/process-wakeups.ts";
export { QueueClosedError } from "./queue/queue-closed-error.ts";
export { RunningListeners } from "./queue/running-listeners.ts";
export { SiblingQueues } from "./queue/sibling-queues.ts";
export {
  checkMessagePriority,
  MAX_MESSAGE_PRIORITY,
  MIN_MESSAGE_PRIORITY,
} from "./queue/priority.ts";
export { checkQueueChannel } from "./queue/in-process-message-queue.ts";
export { checkPublication, checkSubscription, TopicListeners } from "./pubsub/topic-listeners.ts";
export { capabilityChannel } from "./tasks/routing.ts";
