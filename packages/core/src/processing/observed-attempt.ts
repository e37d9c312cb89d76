// What the dispatcher's internal observers see of one attempt: the message,
// its outcome and, only for an observer that asks, the lifecycle event.
// The built-in observers (status records, throughput, task records,
// webhooks, batches, steps) are registered in every federation, and most
// decide from the message and the outcome alone that an attempt is none of
// their business; building the event for each of them, on every message,
// was most of what events cost when nobody listened.
import type { Span } from "@opentelemetry/api";
import { parseTimestamp } from "../time/timestamp.ts";
import type { BaseMessage } from "./envelope.ts";
import type { MessageEvent } from "./events.ts";
import type { Outcome } from "./outcome.ts";
import { RunPostponedError } from "./run-postponed.ts";
import type { TimedOutRun } from "./time-limit.ts";
import { hasTraceContext, traceContextOf } from "./tracing.ts";

/**
 * One attempt of a message, as an internal observer of the dispatcher sees
 * it.  Its `event` and `trace` are worked out when first read, and then
 * kept: the event is the very object the public listeners get.  Internal.
 * @since 0.4.0
 */
export class ObservedAttempt {
  /** The message as it was dispatched (this attempt). */
  readonly message: BaseMessage;
  /** What became of the attempt. */
  readonly outcome: Outcome;
  /** The task's name, for task messages. */
  readonly taskName: string | undefined;
  /** When the dispatcher took the message, in epoch milliseconds. */
  readonly startedAt: number;
  /** How long the attempt ran, in milliseconds. */
  readonly duration: number;
  readonly #timedOut: TimedOutRun | undefined;
  readonly #span: Span | undefined;
  #event: MessageEvent | undefined;
  #trace: Readonly<Record<string, string>> | undefined;

  /**
   * @param message The message.
   * @param outcome Its outcome.
   * @param taskName The task's name, if any.
   * @param startedAt When the dispatcher took it, in epoch milliseconds.
   * @param duration How long it ran, in milliseconds.
   * @param timedOut How it timed out, if it did.
   * @param span The span it ran in, ended by now, if any.
   */
  constructor(
    message: BaseMessage,
    outcome: Outcome,
    taskName: string | undefined,
    startedAt: number,
    duration: number,
    timedOut: TimedOutRun | undefined,
    span: Span | undefined,
  ) {
    this.message = message;
    this.outcome = outcome;
    this.taskName = taskName;
    this.startedAt = startedAt;
    this.duration = duration;
    this.#timedOut = timedOut;
    this.#span = span;
  }

  /** The lifecycle event of the attempt, as the listeners get it. */
  get event(): MessageEvent {
    return this.#event ??= toEvent(
      this.message,
      this.taskName,
      this.duration,
      this.outcome,
      this.#timedOut,
    );
  }

  /**
   * The W3C trace context of the span the attempt ran in (`{}` when it was
   * not traced), so that work an observer starts is a child of it.
   */
  get trace(): Readonly<Record<string, string>> {
    // The span has ended by now, so it is asked for a valid context, not
    // whether it records.
    return this.#trace ??= this.#span != null && hasTraceContext(this.#span)
      ? traceContextOf(this.#span)
      : NO_TRACE;
  }
}

function toEvent(
  message: BaseMessage,
  taskName: string | undefined,
  duration: number,
  outcome: Outcome,
  timedOut: TimedOutRun | undefined,
): MessageEvent {
  const started = parseTimestamp(message.started);
  // One object, the outcome's fields copied in, where a spread of a base
  // object into another spread made three.
  const event = { ...outcome } as Record<string, unknown>;
  event.messageId = message.id;
  event.kind = message.type;
  if (taskName != null) event.taskName = taskName;
  event.attempt = message.attempt;
  event.enqueuedAt = new Date(Number.isNaN(started) ? 0 : started);
  event.duration = duration;
  if (timedOut != null) event.abandoned = timedOut.abandoned;
  if (outcome.type === "retrying" && outcome.error instanceof RunPostponedError) {
    event.waitFor = outcome.error.waitFor;
  }
  return event as unknown as MessageEvent;
}

const NO_TRACE: Readonly<Record<string, string>> = Object.freeze({});
