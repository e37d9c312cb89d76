import { type MeterProvider, metrics } from "@opentelemetry/api";
import { InProcessPubSub } from "../../pubsub/in-process-pubsub.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";
import { DEFAULT_TASK_DEDUPLICATION_TTL_MS } from "../../tasks/dedup.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import {
  checkFederationOption,
  FederationOptionError,
} from "../../options/federation-option-error.ts";
import { positiveDurationOption } from "../../options/value-options.ts";

/**
 * The federation options for operating tasks and observing messages:
 * deduplication, the failed-task store and metrics.  Part of
 * `FederationOptions`.
 * @since 0.2.0
 */
export interface FederationOperationsOptions {
  /**
   * How long a task's `deduplicationKey` is held at most, counted from the
   * enqueue that took it; the key is freed earlier when the task finishes.
   * @default `{ hours: 1 }`
   */
  readonly taskDeduplicationTtl?: DurationInput;

  /**
   * How long a task that failed for good (exhausted or permanent) is kept,
   * with its payload and error, for `listFailedTasks()` and
   * `retryFailedTask()`.  `0` (or a zero duration) keeps none.
   * @default `{ days: 7 }`
   */
  readonly failedTaskRetention?: DurationInput | 0;

  /**
   * Whether outbox deliveries (fan-out members included) that fail for
   * good are kept with the failed tasks, for `failedTaskRetention`: their
   * activity, inbox, last status, error and attempts, listed, counted,
   * replayed and discarded like tasks (`kind: "delivery"`).
   * @default `true`
   * @since 0.3.0
   */
  readonly keepFailedDeliveries?: boolean;

  /**
   * How long a completed task is kept, for `listCompletedTasks()`.  `0` (or
   * a zero duration) keeps none.
   * @default `0` (completed tasks are not kept)
   */
  readonly completedTaskRetention?: DurationInput | 0;

  /** The OpenTelemetry meter provider for Fedwork's metrics; the global one by default. */
  readonly meterProvider?: MeterProvider;

  /**
   * How long a task's status record (`getTaskStatus()`) is kept after its
   * last change: a terminal record for this long, a queued one this long
   * past its delay.  `0` (or a zero duration) keeps no records and
   * publishes no updates, so `watchTask()` sees nothing.
   * @default `{ days: 1 }`
   * @since 0.2.0
   */
  readonly taskStatusRetention?: DurationInput | 0;

  /**
   * The publish/subscribe transport that carries task updates (state
   * changes and progress) to `watchTask()` and `watchTasks()`.  Give every
   * process the same transport on the same server, e.g. `RedisPubSub` or
   * `PostgresPubSub`, so that a watcher sees the tasks other processes run.
   * @default A new `InProcessPubSub` (this process only).
   * @since 0.2.0
   */
  readonly pubsub?: PubSub;
}

/**
 * {@link FederationOperationsOptions} after validation, durations in
 * milliseconds.
 * @since 0.2.0
 */
export interface ResolvedFederationOperationsOptions {
  readonly taskDeduplicationTtlMs: number;
  readonly failedTaskRetentionMs: number;
  readonly keepFailedDeliveries: boolean;
  readonly completedTaskRetentionMs: number;
  readonly meterProvider: MeterProvider;
  readonly taskStatusRetentionMs: number;
  readonly pubsub: PubSub;
}

const DEFAULT_FAILED_TASK_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const DEFAULT_TASK_STATUS_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Validates the operations options and fills in the defaults.
 * @param options The federation options.
 * @returns The resolved options.
 * @throws {FederationOptionError} When an option is invalid.
 * @since 0.2.0
 */
export function resolveFederationOperationsOptions(
  options: FederationOperationsOptions,
): ResolvedFederationOperationsOptions {
  // A time to live in the store, which no timer holds: no upper bound.
  const taskDeduplicationTtlMs = checkFederationOption(
    "taskDeduplicationTtl",
    () =>
      positiveDurationOption(
        options.taskDeduplicationTtl ?? undefined,
        "taskDeduplicationTtl",
        DEFAULT_TASK_DEDUPLICATION_TTL_MS,
        Infinity,
      ),
  );
  const meterProvider = options.meterProvider ?? metrics.getMeterProvider();
  if (typeof meterProvider?.getMeter !== "function") {
    throw new FederationOptionError(
      "meterProvider",
      "The meterProvider option must be an OpenTelemetry MeterProvider.",
    );
  }
  return {
    taskDeduplicationTtlMs,
    failedTaskRetentionMs: options.failedTaskRetention == null
      ? DEFAULT_FAILED_TASK_RETENTION_MS
      : duration("failedTaskRetention", options.failedTaskRetention),
    keepFailedDeliveries: resolveKeepFailedDeliveries(options.keepFailedDeliveries),
    completedTaskRetentionMs: options.completedTaskRetention == null
      ? 0
      : duration("completedTaskRetention", options.completedTaskRetention),
    meterProvider,
    taskStatusRetentionMs: options.taskStatusRetention == null
      ? DEFAULT_TASK_STATUS_RETENTION_MS
      : duration("taskStatusRetention", options.taskStatusRetention),
    pubsub: resolvePubSub(options.pubsub),
  };
}

function resolvePubSub(pubsub: unknown): PubSub {
  if (pubsub == null) return new InProcessPubSub();
  const candidate = pubsub as Partial<PubSub>;
  if (
    typeof pubsub !== "object" || typeof candidate.publish !== "function" ||
    typeof candidate.subscribe !== "function"
  ) {
    throw new FederationOptionError(
      "pubsub",
      "The pubsub option must be a PubSub (an object with publish() and subscribe() " +
        "methods), e.g. new RedisPubSub(...) or new PostgresPubSub(...).",
    );
  }
  return pubsub as PubSub;
}

function duration(name: string, value: DurationInput | 0): number {
  if (value === 0) return 0;
  return checkFederationOption(name, () => durationToMilliseconds(value, name));
}

function resolveKeepFailedDeliveries(value: unknown): boolean {
  if (value == null) return true;
  if (typeof value !== "boolean") {
    throw new FederationOptionError(
      "keepFailedDeliveries",
      `The keepFailedDeliveries option must be true or false; got ${JSON.stringify(value)}.`,
    );
  }
  return value;
}
