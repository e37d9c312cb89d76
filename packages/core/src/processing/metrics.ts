import type { Attributes, Counter, Histogram, MeterProvider } from "@opentelemetry/api";
import type { BaseMessage } from "./envelope.ts";
import type { MessageEvent } from "./events.ts";

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
  completed: "fedwork.message.completed",
  retried: "fedwork.message.retried",
  failed: "fedwork.message.failed",
  dropped: "fedwork.message.dropped",
  duration: "fedwork.message.duration",
  queueWait: "fedwork.message.queue_wait",
} as const;

/**
 * Counters and histograms of queue messages, fed by the enqueue path and
 * by the dispatcher's lifecycle events (as a `MessageObserver`), for every
 * message kind: `fedwork.message.type` is the kind (`inbox`, `outbox`,
 * `fanout`, `task`) and `fedwork.task.name` the task's name.  An attempt
 * that will be retried counts as `retried`, never as `completed`.
 * @since 0.2.0
 */
export class MessageMetrics {
  readonly #enqueued: Counter;
  readonly #deduplicated: Counter;
  readonly #completed: Counter;
  readonly #retried: Counter;
  readonly #failed: Counter;
  readonly #dropped: Counter;
  readonly #duration: Histogram;
  readonly #queueWait: Histogram;

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
    this.#completed = counter(MESSAGE_METRICS.completed, "Attempts whose handler returned.");
    this.#retried = counter(
      MESSAGE_METRICS.retried,
      "Attempts that failed and will be tried again.",
    );
    this.#failed = counter(
      MESSAGE_METRICS.failed,
      "Messages that failed for good (fedwork.failure.reason: permanent or exhausted).",
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
  }

  /**
   * Counts messages put into a queue.
   * @param messages The messages.
   */
  recordEnqueued(messages: readonly BaseMessage[]): void {
    for (const message of messages) this.#enqueued.add(1, attributesOf(message));
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
   * Records one lifecycle event: a `MessageObserver`.
   * @param event The event.
   * @param message The message.
   * @param startedAt When the dispatcher took it, in epoch milliseconds.
   */
  readonly observe = (event: MessageEvent, message: BaseMessage, startedAt: number): void => {
    const attributes: Attributes = {
      "fedwork.message.type": event.kind,
      ...(event.taskName == null ? {} : { "fedwork.task.name": event.taskName }),
    };
    switch (event.type) {
      case "completed":
        this.#completed.add(1, attributes);
        break;
      case "retrying":
        this.#retried.add(1, attributes);
        break;
      case "failed":
        this.#failed.add(1, { ...attributes, "fedwork.failure.reason": event.reason });
        break;
      case "dropped":
        this.#dropped.add(1, attributes);
        break;
    }
    this.#duration.record(event.duration / 1000, {
      ...attributes,
      "fedwork.message.outcome": event.type,
    });
    const due = Date.parse(message.dueAt ?? (message.attempt === 0 ? message.started : ""));
    if (!Number.isNaN(due)) {
      this.#queueWait.record(Math.max(0, startedAt - due) / 1000, attributes);
    }
  };
}

function attributesOf(message: BaseMessage): Attributes {
  const taskName = (message as { readonly taskName?: unknown }).taskName;
  return {
    "fedwork.message.type": message.type,
    ...(typeof taskName === "string" ? { "fedwork.task.name": taskName } : {}),
  };
}
