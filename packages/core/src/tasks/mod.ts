export {
  decodeTaskPayload,
  type DecodeTaskPayloadOptions,
  DEFAULT_TASK_PAYLOAD_MAX_DEPTH,
  DEFAULT_TASK_PAYLOAD_MAX_SIZE,
  encodeTaskPayload,
  type EncodeTaskPayloadOptions,
  type TaskPayloadLimits,
} from "./codec/mod.ts";
export type {
  TaskDefinition,
  TaskEnqueueOptions,
  TaskEventListeners,
  TaskOptions,
} from "./definition.ts";
export {
  TaskDefinitionError,
  TaskNotDefinedError,
  TaskPayloadDecodingError,
  TaskPayloadEncodingError,
  TaskPayloadLoadError,
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "./errors.ts";
export type { TaskMessage } from "./message.ts";
export type { TaskRunInfo } from "./run-info.ts";
