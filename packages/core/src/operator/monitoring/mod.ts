/**
 * What an operator's dashboard reads: the depth of every queue, by role
 * and by task, and recent throughput (kept by processing/).
 * @module
 * @since 0.3.0
 */
export {
  collectQueueDepths,
  type LabelledQueue,
  labelQueues,
  type QueueDepthEntry,
  type QueueMonitoring,
} from "./monitoring.ts";
