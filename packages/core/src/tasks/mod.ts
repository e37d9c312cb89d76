export {
  decodeTaskPayload,
  type DecodeTaskPayloadOptions,
  encodeTaskPayload,
  type EncodeTaskPayloadOptions,
  type TaskPayloadLimits,
} from "./codec/mod.ts";
export type {
  TaskDefinition,
  TaskEnqueueCommonOptions,
  TaskEnqueueFlowOptions,
  TaskEnqueueManyOptions,
  TaskEnqueueOptions,
  TaskEnqueueResult,
  TaskEventListeners,
  TaskManyOptions,
  TaskOptions,
} from "./definition.ts";
export type { TaskDebounceManyOptions, TaskDebounceOptions } from "./debounce.ts";
export type { TaskThrottleManyOptions, TaskThrottleOptions } from "./throttle.ts";
export type { TaskConcurrencyOptions, TaskRateLimitOptions } from "./limit-options.ts";
export {
  FailedTaskNotFoundError,
  TaskCancelledError,
  TaskDeduplicationNotSupportedError,
  TaskDefinitionError,
  TaskNotDefinedError,
  TaskPayloadDecodingError,
  TaskPayloadEncodingError,
  TaskPayloadLoadError,
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "./errors.ts";
export type { TaskHandleManyOptions, TaskItem, TaskItemResults } from "./handle-many.ts";
export { TaskItemFailure } from "./item-failure.ts";
export type { TaskRunInfo } from "./run-info.ts";
export {
  MAX_TASK_PROGRESS_DATA_BYTES,
  TaskProgressError,
  type TaskProgressInput,
} from "./progress.ts";
export {
  DEFAULT_MAX_TASK_RESULT_BYTES,
  type TaskResultOmission,
  type TaskResultValue,
} from "./result.ts";
export {
  type ActivityMatchTarget,
  type ActivityType,
  DEFAULT_STEP_EVENT_WINDOW_MS,
  MAX_STEP_RECORD_BYTES,
  MAX_STEP_WAIT_MS,
  MAX_TASK_STEPS,
  type SendEventOptions,
  type SendEventResult,
  type StepRunOptions,
  TaskStepError,
  type TaskStepInfo,
  TaskStepInvokeError,
  type TaskStepProblem,
  type TaskSteps,
  type TaskStepsStatus,
  type WaitForActivityOptions,
  type WaitForEventOptions,
} from "./steps/mod.ts";
