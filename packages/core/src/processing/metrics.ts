import {
  type Attributes,
  type Counter,
  createNoopMeter,
  type Histogram,
  type MeterProvider,
} from "@opentelemetry/api";
import type { ObservedAttempt } from "./observed-attempt.ts";
import type { BaseMessage } from "./envelope.ts";
import { RunPostponedError } from "./run-postponed.ts";
import { parseTimestamp } from "../time/timestamp.ts";
import { durationToMilliseconds } from "../time/duration.ts";

/** The instrumentation scope name of Fedwork's meters. */
const METER_NAME = "@fedwork/core";
const METER_VERSION = "0.2.0";

/**
 * The names of the metrics Fedwork records, as listed in the manual's
 * OpenTelemetry page.
 * @since 0.2.0
 */
export const MESSAGE_METRICS = {
  enqueued: "fedwork.message.enqueued",
  deduplicated: "fedwork.message.deduplicated",
  /** @since 0.4.0 */
  throttled: "fedwork.message.throttled",
  completed: "fedwork.message.completed",
  /** @since 0.3.0 */
  unhandled: "fedwork.message.unhandled",
  retried: "fedwork.message.retried",
  failed: "fedwork.message.failed",
  dropped: "fedwork.message.dropped",
  duration: "fedwork.message.duration",
  queueWait: "fedwork.message.queue_wait",
  /** @since 0.3.0 */
  timedOut: "fedwork.message.timed_out",
  /** @since 0.3.0 */
  abandoned: "fedwork.message.abandoned",
  /** @since 0.4.0 */
  quarantined: "fedwork.message.quarantined",
  /** @since 0.4.0 */
  waited: "fedwork.message.waited",
  /** @since 0.4.0 */
  waitDelay: "fedwork.message.wait_delay",
} as const;

/**
 * Counters and histograms of queue messages, fed by the enqueue path and
 * by the dispatcher's lifecycle events (as a `MessageObserver`), for every
 * message kind: `fedwork.message.type` is the kind (`inbox`, `outbox`,
 * `fanout`, `task`) and `fedwork.task.name` the task's name.  An attempt
 * that will be retried counts as `retried`, never as `completed`; a message
 * nothing handles counts as `unhandled`, not `completed`.  Messages
 * processed in-line, without a queue, are counted the same way.
 * @since 0.2.0
 */
export class MessageMetrics {
  readonly #enqueued: Counter;
  readonly #deduplicated: Counter;
  readonly #throttled: Counter;
  readonly #completed: Counter;
  readonly #unhandled: Counter;
  readonly #retried: Counter;
  readonly #failed: Counter;
  readonly #dropped: Counter;
  readonly #duration: Histogram;
  readonly #queueWait: Histogram;
  readonly #timedOut: Counter;
  readonly #abandoned: Counter;
  readonly #quarantined: Counter;
  readonly #waited: Counter;
  readonly #waitDelay: Histogram;
  /**
   * Attribute sets by kind, task name and outcome, built once: observing
   * runs for every message, and building them anew was a tenth of the
   * dispatcher's own time in a 100k-task drain.
   */
  readonly #attributes = new Map<
    string,
    Map<string | typeof NONE, Map<string | typeof NONE, Attributes>>
  >();
  /**
   * `false` when every instrument is OpenTelemetry's no-op one (no meter
   * provider was given and none is registered globally): recording then
   * does nothing, and the per-message observer need not be called at all.
   * @since 0.3.0
   */
  readonly recording: boolean;

  /**
   * @param provider The meter provider.
   */
  constructor(provider: MeterProvider) {
    const meter = provider.getMeter(METER_NAME, METER_VERSION);
    const counter = (name: string, description: string) =>
      meter.createCounter(name, { description, unit: "{message}" });
    this.#enqueued = counter(MESSAGE_METRICS.enqueued, "Messages put into a queue.");
    this.#deduplicated = counter(
      MESSAGE_METRICS.deduplicated,
      "Task enqueues that added nothing because their deduplication key was held.",
    );
    this.#throttled = counter(
      MESSAGE_METRICS.throttled,
      "Task enqueues that added nothing because their throttle key's period was open.",
    );
    this.#completed = counter(MESSAGE_METRICS.completed, "Attempts whose handler returned.");
    this.#unhandled = counter(
      MESSAGE_METRICS.unhandled,
      "Messages nothing was registered to handle (an activity no inbox listener handles).",
    );
    this.#retried = counter(
      MESSAGE_METRICS.retried,
      "Attempts that failed and will be tried again.",
    );
    this.#failed = counter(
      MESSAGE_METRICS.failed,
      "Messages that failed for good (fedwork.failure.reason: permanent, exhausted, " +
        "timeout or poison).",
    );
    this.#dropped = counter(
      MESSAGE_METRICS.dropped,
      "Messages discarded because they cannot be processed.",
    );
    this.#duration = meter.createHistogram(MESSAGE_METRICS.duration, {
      description: "How long one attempt ran, whatever its outcome (fedwork.message.outcome).",
      unit: "s",
    });
    this.#queueWait = meter.createHistogram(MESSAGE_METRICS.queueWait, {
      description: "How long an attempt waited in its queue after it became due.",
      unit: "s",
    });
    this.#timedOut = counter(
      MESSAGE_METRICS.timedOut,
      "Attempts whose handler ran out of time (also counted as retried or failed).",
    );
    this.#abandoned = counter(
      MESSAGE_METRICS.abandoned,
      "Timed-out handlers that ignored their signal through the grace period and were left " +
        "running while the worker moved on.",
    );
    this.#quarantined = counter(
      MESSAGE_METRICS.quarantined,
      "Poison messages: handed out more than maxDeliveries times without an outcome, so " +
        "quarantined in the failed-task store without running (also counted as failed).",
    );
    this.#waited = counter(
      MESSAGE_METRICS.waited,
      "Runs put back to wait without spending an attempt (fedwork.wait.cause: concurrency, " +
        "rate, retryAfter or other); also counted as retried.",
    );
    this.#waitDelay = meter.createHistogram(MESSAGE_METRICS.waitDelay, {
      description: "How long a run was put back to wait for (fedwork.wait.cause).",
      unit: "s",
    });
    // The API hands out one shared instrument of each kind for nothing to
    // record; a meter provider made with another copy of the API is taken
    // as recording, which is only slower.
    const noop = createNoopMeter();
    const noopCounter = noop.createCounter("noop");
    const counters = [
      this.#enqueued,
      this.#deduplicated,
      this.#throttled,
      this.#completed,
      this.#unhandled,
      this.#retried,
      this.#failed,
      this.#dropped,
      this.#timedOut,
      this.#abandoned,
      this.#quarantined,
      this.#waited,
    ];
    const noopHistogram = noop.createHistogram("noop");
    this.recording = counters.some((instrument) => instrument !== noopCounter) ||
      this.#duration !== noopHistogram || this.#queueWait !== noopHistogram ||
      this.#waitDelay !== noopHistogram;
  }

  /**
   * Counts messages put into a queue.
   * @param messages The messages.
   */
  recordEnqueued(messages: readonly BaseMessage[]): void {
    for (const message of messages) {
      const taskName = (message as { readonly taskName?: unknown }).taskName;
      this.#enqueued.add(
        1,
        this.#attributesOf(message.type, typeof taskName === "string" ? taskName : undefined),
      );
    }
  }

  /**
   * Counts task enqueues that deduplication turned into no-ops.
   * @param taskName The task's name.
   * @param count How many.
   */
  recordDeduplicated(taskName: string, count = 1): void {
    if (count > 0) {
      this.#deduplicated.add(count, {
        "fedwork.message.type": "task",
        "fedwork.task.name": taskName,
      });
    }
  }

  /**
   * Counts task enqueues that `throttle` turned into no-ops.
   * @param taskName The task's name.
   * @param count How many.
   * @since 0.4.0
   */
  recordThrottled(taskName: string, count = 1): void {
    if (count > 0) {
      this.#throttled.add(count, {
        "fedwork.message.type": "task",
        "fedwork.task.name": taskName,
      });
    }
  }

  /**
   * Records one attempt: a `MessageObserver`.
   * @param attempt The attempt, its event and message.
   */
  readonly observe = (attempt: ObservedAttempt): void => {
    const { event, message, startedAt } = attempt;
    const attributes = this.#attributesOf(event.kind, event.taskName);
    switch (event.type) {
      case "completed":
        this.#completed.add(1, attributes);
        break;
      case "unhandled":
        this.#unhandled.add(1, attributes);
        break;
      case "retrying":
        this.#retried.add(1, attributes);
        if (event.reason === "timeout") this.#recordTimeout(attributes, event.abandoned);
        else if (event.reason === "wait") {
          const cause = event.error instanceof RunPostponedError ? event.error.waitFor : "other";
          const waited = { ...attributes, "fedwork.wait.cause": cause };
          this.#waited.add(1, waited);
          if (event.delay != null) {
            this.#waitDelay.record(durationToMilliseconds(event.delay, "delay") / 1000, waited);
          }
        }
        break;
      case "failed":
        this.#failed.add(1, { ...attributes, "fedwork.failure.reason": event.reason });
        if (event.reason === "timeout") this.#recordTimeout(attributes, event.abandoned);
        else if (event.reason === "poison") this.#quarantined.add(1, attributes);
        break;
      case "dropped":
        this.#dropped.add(1, attributes);
        break;
    }
    this.#duration.record(
      event.duration / 1000,
      this.#attributesOf(event.kind, event.taskName, event.type),
    );
    const due = parseTimestamp(message.dueAt ?? (message.attempt === 0 ? message.started : ""));
    if (!Number.isNaN(due)) {
      this.#queueWait.record(Math.max(0, startedAt - due) / 1000, attributes);
    }
  };

  #recordTimeout(attributes: Attributes, abandoned: boolean | undefined): void {
    this.#timedOut.add(1, attributes);
    if (abandoned) this.#abandoned.add(1, attributes);
  }

  /** The attributes for a kind, task name and (for durations) outcome. */
  #attributesOf(kind: string, taskName: string | undefined, outcome?: string): Attributes {
    // Kinds and task names come from messages, which may hold anything:
    // the cache is bounded.
    let byTask = this.#attributes.get(kind);
    if (byTask == null) {
      if (this.#attributes.size >= MAX_CACHED_NAMES) {
        return buildAttributes(kind, taskName, outcome);
      }
      this.#attributes.set(kind, byTask = new Map());
    }
    let byOutcome = byTask.get(taskName ?? NONE);
    if (byOutcome == null) {
      if (byTask.size >= MAX_CACHED_NAMES) return buildAttributes(kind, taskName, outcome);
      byTask.set(taskName ?? NONE, byOutcome = new Map());
    }
    let attributes = byOutcome.get(outcome ?? NONE);
    if (attributes == null) {
      byOutcome.set(outcome ?? NONE, attributes = buildAttributes(kind, taskName, outcome));
    }
    return attributes;
  }
}

const MAX_CACHED_NAMES = 1024;
/** The cache key for an absent task name or outcome. */
const NONE = Symbol("none");

function buildAttributes(
  kind: string,
  taskName: string | undefined,
  outcome: string | undefined,
): Attributes {
  return {
    "fedwork.message.type": kind,
    ...(taskName == null ? {} : { "fedwork.task.name": taskName }),
    ...(outcome == null ? {} : { "fedwork.message.outcome": outcome }),
  };
}
