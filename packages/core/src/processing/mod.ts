/**
 * The processing pipeline: message kinds register handlers; one dispatcher
 * turns what each handler did into an outcome, stores retries and emits
 * lifecycle events; workers listen to queues and shut down gracefully.
 * @module
 * @since 0.2.0
 */
export {
  MessageDispatcher,
  type MessageDispatcherOptions,
  type MessageKindHandler,
  type MessageObserver,
  type MessageRun,
  type MessageSource,
  RetryNotStoredError,
  type UnhandledRun,
} from "./dispatcher.ts";
export { type BaseMessage, isBaseMessage } from "./envelope.ts";
export { ObservedAttempt } from "./observed-attempt.ts";
export {
  describeError,
  type DescribeErrorOptions,
  type ErrorDescription,
  MAX_ERROR_MESSAGE_LENGTH,
  readErrorDescription,
} from "./error-description.ts";
export {
  HandlerTimeoutError,
  MalformedMessageError,
  PermanentError,
  PoisonMessageError,
  RunCancelledError,
} from "./errors.ts";
export {
  DEFAULT_MAX_DELIVERIES,
  type FederationDeliveryLimitOptions,
  resolveDeliveryLimitOptions,
  resolveMaxDeliveries,
} from "./delivery-limit.ts";
export { RunPostponedError } from "./run-postponed.ts";
export {
  type MessageCancelledEvent,
  type MessageCompletedEvent,
  type MessageDroppedEvent,
  type MessageEvent,
  type MessageEventBase,
  MessageEventHub,
  type MessageEventListener,
  type MessageEventType,
  type MessageFailedEvent,
  type MessageRetryingEvent,
  type MessageUnhandledEvent,
} from "./events.ts";
export type { Outcome, OutcomeType } from "./outcome.ts";
export type { RunWaitCause } from "./run-postponed.ts";
export { MESSAGE_METRICS, MessageMetrics } from "./metrics.ts";
export {
  type GetThroughputOptions,
  THROUGHPUT_MAX_MINUTES,
  type ThroughputBucket,
  ThroughputRecorder,
} from "./throughput.ts";
export {
  DEFAULT_TIMEOUT_GRACE_PERIOD_MS,
  gracePeriodToMilliseconds,
  runWithinTimeLimit,
  type TimedOutRun,
  type TimeLimitedRun,
  type TimeLimitOptions,
  timeLimitToMilliseconds,
} from "./time-limit.ts";
export { runWorkers, type RunWorkersOptions } from "./workers.ts";
export { type MessageRunner, MessageRunners } from "./message-runners.ts";
