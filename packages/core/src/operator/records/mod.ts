/**
 * Task records: failed tasks kept for inspection and replay, completed
 * tasks when asked for, status records, and the metrics the dispatcher's
 * events feed; the task enqueuer that records tasks as queued.
 * @module
 * @since 0.2.0
 */
export {
  type CountFailedTasksOptions,
  type FailedTaskDetails,
  type TaskOperations,
  TaskRecords,
  type TaskRecordsPort,
} from "./operations.ts";
