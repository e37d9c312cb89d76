export { decodeTaskPayload, type DecodeTaskPayloadOptions, encodeTaskPayload } from "./codec.ts";
export type { TaskDefinition, TaskDefinitionOptions, TaskEnqueueOptions } from "./definition.ts";
export {
  TaskDefinitionError,
  TaskNotDefinedError,
  TaskPayloadDecodingError,
  TaskPayloadEncodingError,
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "./errors.ts";
export type { TaskMessage } from "./message.ts";
export type { TaskRegistry } from "./registry.ts";
