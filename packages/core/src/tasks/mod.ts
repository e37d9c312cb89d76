export { decodeTaskPayload, type DecodeTaskPayloadOptions, encodeTaskPayload } from "./codec.ts";
export type {
  TaskDefinition,
  TaskEnqueueManyOptions,
  TaskEnqueueOptions,
  TaskEnqueueResult,
  TaskEventListeners,
  TaskOptions,
} from "./definition.ts";
export { DEFAULT_TASK_DEDUPLICATION_TTL_MS } from "./dedup.ts";
export type {
  ListTaskRecordsOptions,
  TaskRecord,
  TaskRecordError,
  TaskRecordPage,
} from "./failed-store.ts";
export type { TaskSchedule, TaskScheduleTiming } from "./schedule/mod.ts";
export {
  FailedTaskNotFoundError,
  TaskDeduplicationNotSupportedError,
  TaskDefinitionError,
  TaskNotDefinedError,
  TaskPayloadDecodingError,
  TaskPayloadEncodingError,
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "./errors.ts";
export type { TaskMessage, TaskMessageDeduplication } from "./message.ts";
export type { TaskRunInfo } from "./run-info.ts";
