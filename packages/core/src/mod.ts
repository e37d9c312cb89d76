/**
 * `@fedwork/core`: the federation, its contexts and workers, the ActivityPub
 * building blocks (HTTP signatures, keys), message queues, key–value stores,
 * retry policies and typed background tasks.
 * @module
 * @since 0.1.0
 */
// First, so that an unsupported Node.js is refused before anything else loads.
import "./supported-runtime.ts";
export * from "./time/mod.ts";
export { UnknownOptionError } from "./options/mod.ts";
export * from "./queue/mod.ts";
export * from "./kv/mod.ts";
export * from "./pubsub/mod.ts";
export * from "./retry/mod.ts";
export {
  type ErrorDescription,
  type GetThroughputOptions,
  HandlerTimeoutError,
  type MessageCancelledEvent,
  type MessageCompletedEvent,
  type MessageDroppedEvent,
  type MessageEvent,
  type MessageEventBase,
  type MessageEventListener,
  type MessageEventType,
  type MessageFailedEvent,
  type MessageRetryingEvent,
  type MessageUnhandledEvent,
  type Outcome,
  type OutcomeType,
  PermanentError,
  PoisonMessageError,
  RetryNotStoredError,
  type RunWaitCause,
  type ThroughputBucket,
} from "./processing/mod.ts";
export * from "./activitypub/mod.ts";
export * from "./federation/mod.ts";
export {
  DeadHostError,
  type HostHealth,
  type HostHealthChange,
} from "./operator/host-health/mod.ts";
export {
  type BatchCompletion,
  type BatchEnqueueResult,
  type BatchMember,
  BatchSealedError,
  type BatchState,
  type BatchStatus,
  type BatchStatusOperations,
  type EnqueueBatchOptions,
  type WatchBatchOptions,
} from "./operator/batches/mod.ts";
export * from "./tasks/mod.ts";
export type {
  FailedDeliveryInfo,
  FailedMessageInfo,
  FailedTaskReason,
  ListTaskRecordsOptions,
  TaskRecord,
  TaskRecordError,
  TaskRecordKind,
  TaskRecordPage,
} from "./operator/records/mod.ts";
export type { TaskSchedule, TaskScheduleTiming } from "./operator/schedules/mod.ts";
export type { PausableTask, PausedWork, PauseOperations } from "./operator/pauses/mod.ts";
export {
  createHealthHandler,
  type EngineHealth,
  type HealthCheckOptions,
  type HealthCheckStatus,
  type HealthHandler,
  type HealthHandlerOptions,
  type HealthOperations,
  type HealthReport,
  type HealthRequestInfo,
  type WorkersHealth,
} from "./operator/health/mod.ts";
export {
  isTerminalTaskState,
  type TaskProgress,
  type TaskState,
  type TaskStatus,
  type TaskUpdate,
  TERMINAL_TASK_STATES,
} from "./operator/status/mod.ts";
export {
  closeOnSignals,
  type CloseOnSignalsOptions,
  type FederationCloseOptions,
  type ShutdownSignal,
  type SignalClosable,
  type SignalClosing,
} from "./operator/workers/mod.ts";
export { groupWorkersByMachine, MAX_MACHINE_ID_LENGTH } from "./operator/workers/mod.ts";
export type {
  WorkerCounts,
  WorkerEvent,
  WorkerInfo,
  WorkerMachine,
  WorkerPresenceOptions,
  WorkerQueueInfo,
  WorkerState,
} from "./operator/workers/mod.ts";
export {
  computeWebhookSignature,
  signWebhookRequest,
  verifyWebhookRequest,
  type VerifyWebhookRequestOptions,
  type Webhook,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  WebhookDeliveryError,
  type WebhookEventType,
  type WebhookInit,
  type WebhookPayload,
  type WebhookRetryPolicy,
  type WebhookTaskInfo,
  WebhookVerificationError,
  type WebhookVerificationFailure,
} from "./operator/webhooks/mod.ts";
