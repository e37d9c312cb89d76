export { decodeTaskPayload, type DecodeTaskPayloadOptions, encodeTaskPayload } from "./codec.ts";
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
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "./errors.ts";
export type { TaskMessage } from "./message.ts";
export type { TaskRunInfo } from "./run-info.ts";
