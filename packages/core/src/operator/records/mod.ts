/**
 * Task records: failed tasks kept for inspection and replay, completed
 * tasks when asked for, status records, and the metrics the dispatcher's
 * events feed; the task enqueuer that records tasks as queued; the store
 * the records are kept in.
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
export {
  checkRecordKind,
  FAILED_DELIVERY_NAME,
  FAILED_MESSAGE_NAMES,
  type FailedDeliveryInfo,
  type FailedDeliveryInput,
  type FailedMessageInfo,
  type FailedTaskReason,
  type ListTaskRecordsOptions,
  type TaskRecord,
  type TaskRecordError,
  type TaskRecordKind,
  type TaskRecordPage,
  TaskRecordStore,
  type TaskRetentionLookup,
} from "./record-store.ts";
