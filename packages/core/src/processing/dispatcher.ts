import { InFlightList } from "./in-flight-list.ts";
import { getLogger } from "@logtape/logtape";
import { type Span, SpanKind, type Tracer } from "@opentelemetry/api";
import type { Temporal } from "@js-temporal/polyfill";
import type { MessageQueue, MessageRedelivery } from "../queue/message-queue.ts";
import { handOverMessage } from "../queue/message-ownership.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { durationToMilliseconds, millisecondsToDuration } from "../time/duration.ts";
import { parseTimestamp } from "../time/timestamp.ts";
import { type BaseMessage, isBaseMessage } from "./envelope.ts";
import {
  HandlerTimeoutError,
  MalformedMessageError,
  PermanentError,
  PoisonMessageError,
  RunCancelledError,
} from "./errors.ts";
import { DEFAULT_MAX_DELIVERIES } from "./delivery-limit.ts";
import type { MessageEventHub, MessageEventListener, MessageEventType } from "./events.ts";
import type { Outcome } from "./outcome.ts";
import { sendToQueue } from "./producer.ts";
import {
  DEFAULT_TIMEOUT_GRACE_PERIOD_MS,
  runWithinTimeLimit,
  SharedTimeLimitError,
  type TimedOutRun,
  type TimeLimitedRun,
} from "./time-limit.ts";
import { extractTraceContext, withSpan } from "./tracing.ts";
import { ObservedAttempt } from "./observed-attempt.ts";
import { loggedError } from "./remote-failure.ts";
import { RunPostponedError } from "./run-postponed.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * What a handler gets besides its message.
 * @typeParam TContextData The application data of the worker's contexts.
 * @since 0.2.0
 */
export interface MessageRun<TContextData> {
  /** The worker's context data. */
  readonly contextData: TContextData;
  /**
   * Aborted when the worker shuts down.  The handler gets a signal of its
   * own, which also aborts when its time limit passes (with a
   * {@link HandlerTimeoutError}).
   */
  readonly signal: AbortSignal;
  /**
   * The controller of `signal` when the run has a signal of its own (it has
   * a time limit): a kind handler that ends its run early (a cancelled
   * task) aborts it instead of making one more signal.  Otherwise absent.
   * @since 0.3.0
   */
  readonly controller?: AbortController;
  /**
   * The worker's own signal (its shutdown) when `signal` is the run's own
   * (it has a time limit): what a kind handler that runs many messages at
   * once (a `handleMany` task) gives their shared run, which must not end
   * with one message's time limit or cancellation.  Absent when `signal`
   * is the worker's.
   * @since 0.4.0
   */
  readonly workerSignal?: AbortSignal;
  /**
   * The queue's `MessageRedelivery.yieldSlot()`, when it has one: a kind
   * handler that waits for more messages to run together with this one
   * (a `handleMany` task) gives its listener slot up meanwhile.
   * @since 0.4.0
   */
  readonly yieldSlot?: () => () => void;
}

/**
 * Where a message came from, which says how a retry is stored.
 * @since 0.2.0
 */
export interface MessageSource {
  /** The queue that delivered the message, if any. */
  readonly queue?: MessageQueue;
  /** The queue's redelivery in place, when it offers one. */
  readonly redelivery?: MessageRedelivery;
  /**
   * How many times the message was handed out, for a source without a
   * {@link MessageSource.redelivery} to carry it
   * (`processQueuedMessage()`'s `deliveryCount`: Cloudflare Queues'
   * `message.attempts`).  `redelivery.deliveryCount` wins when both are
   * there.
   * @since 0.4.0
   */
  readonly deliveryCount?: number;
  /**
   * `true` when the message was not taken from a queue but is processed
   * in-line for a caller who hears of a failure and may send it again
   * (without an inbox queue, the sender of an activity answered 500;
   * without an outbox queue, the caller of `sendActivity()`).  A failed
   * attempt then ends as with a natively retrying queue: the outcome is
   * `retrying` with `delay: undefined`, the retry policy is not asked, and
   * the error is thrown to the caller.
   * @since 0.3.0
   */
  readonly callerRetries?: boolean;
}

/**
 * What a handler returns when its message was valid but nothing was
 * registered to handle it (an activity no inbox listener handles): the
 * outcome is then `unhandled` with this reason, not `completed`.
 * @since 0.3.0
 */
export interface UnhandledRun {
  /** Always `"unhandled"`. */
  readonly type: "unhandled";
  /** What had no handler, in words. */
  readonly reason: string;
}

/**
 * How one message kind is processed.  The handler only runs the message:
 * it returns (done), throws {@link PermanentError} (never retry),
 * {@link MalformedMessageError} (drop), or anything else (retry by the
 * policy).  The {@link MessageDispatcher} decides the rest.
 * @typeParam TContextData The application data of the worker's contexts.
 * @typeParam TMessage The message type of this kind.
 * @since 0.2.0
 */
export interface MessageKindHandler<TContextData, TMessage extends BaseMessage> {
  /**
   * Checks the fields of this kind; throws {@link MalformedMessageError}
   * when the message lacks them.
   */
  check(message: BaseMessage): TMessage;
  /**
   * Runs the message; resolves to an {@link UnhandledRun} when nothing
   * was registered to handle it.
   */
  run(message: TMessage, run: MessageRun<TContextData>): Promise<void | UnhandledRun>;
  /** The retry policy for this message. */
  retryPolicy(message: TMessage): RetryPolicy;
  /**
   * The queue to enqueue a retry into when the message did not come from a
   * queue (`processQueuedMessage()`), or `undefined` for none.
   */
  retryQueue(message: TMessage): MessageQueue | undefined;
  /**
   * The task name, for events and logs of task messages.  Also called
   * with messages that failed {@link MessageKindHandler.check}.
   */
  taskName?(message: BaseMessage): string | undefined;
  /**
   * The per-message listener for one event type (a task's own hook), called
   * after the federation's, or `undefined` when there is none.
   */
  listener?(message: TMessage, type: MessageEventType): MessageEventListener | undefined;
  /**
   * The time limit of one attempt of this message, in milliseconds, or
   * `null` for none (the default, without this method).  When it passes,
   * the run's signal aborts with a {@link HandlerTimeoutError} and the
   * attempt fails with the reason `timeout`.
   * @since 0.3.0
   */
  timeout?(message: TMessage): number | null;
  /**
   * How many hand-outs without an outcome this message may have (a task's
   * own `maxDeliveries`), or `undefined` for the dispatcher's
   * {@link MessageDispatcherOptions.maxDeliveries}.
   * @since 0.4.0
   */
  maxDeliveries?(message: TMessage): number | undefined;
}

/**
 * Options for a {@link MessageDispatcher}.
 * @since 0.3.0
 */
export interface MessageDispatcherOptions {
  /**
   * How long a handler whose time limit passed gets to settle, after its
   * signal aborted, before the dispatcher abandons it (leaves it running
   * and decides the outcome), in milliseconds.
   * @default {@link DEFAULT_TIMEOUT_GRACE_PERIOD_MS} (5 seconds)
   */
  readonly timeoutGracePeriodMs?: number;
  /**
   * How many times a queue may hand a message out without an outcome: a
   * message whose `MessageRedelivery.deliveryCount` is greater is not
   * run but fails with the reason `poison`, for kinds whose handler has no
   * limit of its own.
   * @default {@link DEFAULT_MAX_DELIVERIES} (5)
   * @since 0.4.0
   */
  readonly maxDeliveries?: number;
}

/**
 * An internal hook that sees each attempt of a message, before the
 * listeners: what the failed-task store, deduplication reservations and
 * metrics need beyond the public event.  It cannot change the outcome; an
 * observer that throws is logged.  It gets the message and its outcome at
 * once, and the public event (`attempt.event`) only if it reads it: an
 * observer that has nothing to do for most messages decides so without an
 * event being built for it (since 0.4.0; before, it got the event, the
 * message, the start time and the trace context as four arguments).
 * @param attempt The message, its outcome and, on demand, its event and
 *                the W3C trace context of the span it ran in.
 * @since 0.2.0
 */
export type MessageObserver = (attempt: ObservedAttempt) => void | Promise<void>;

/**
 * Thrown (to the queue) when a failed message's retry could not be
 * stored: the queue keeps the message and hands it out again, so nothing
 * is lost.
 * @since 0.2.0
 */
export class RetryNotStoredError extends Error {
  /**
   * @param messageId The message.
   * @param cause Why storing the retry failed.
   */
  constructor(messageId: string, cause: unknown) {
    super(
      `The retry of message ${messageId} could not be stored; the queue keeps the message ` +
        `and hands it out again.`,
      { cause },
    );
    this.name = "RetryNotStoredError";
  }
}

/**
 * The one place that decides what becomes of a queue message: finds the
 * handler of its kind, runs it in a span whose parent is the enqueuing
 * span, turns what happened into an {@link Outcome}, stores the retry
 * (redelivery in place when the queue offers it, else a re-enqueue), and
 * emits one lifecycle event.  It throws to the queue only when the queue
 * must keep the message: native retrial, or a retry that could not be
 * stored.  Messages processed in-line, without a queue, go through it too
 * (with {@link MessageSource.callerRetries}), so that their events, metrics
 * and records are those of queued messages.
 * @typeParam TContextData The application data of the worker's contexts.
 * @since 0.2.0
 */
export class MessageDispatcher<TContextData> {
  // deno-lint-ignore no-explicit-any
  readonly #handlers = new Map<string, MessageKindHandler<TContextData, any>>();
  readonly #tracer: Tracer;
  readonly #events: MessageEventHub;
  /** The messages being processed (their ids and kinds are what `inFlight` shows). */
  readonly #inFlight = new InFlightList<BaseMessage>();
  readonly #observers = new Set<MessageObserver>();
  /** The observers as an array, rebuilt when one is added or removed. */
  #observerList: readonly MessageObserver[] = [];
  readonly #graceMs: number;
  readonly #maxDeliveries: number;

  /**
   * @param tracer The tracer for processing spans.
   * @param events Where lifecycle events go.
   * @param options The grace period of timed-out handlers and the
   *                hand-out limit.
   */
  constructor(tracer: Tracer, events: MessageEventHub, options: MessageDispatcherOptions = {}) {
    this.#tracer = tracer;
    this.#events = events;
    this.#graceMs = options.timeoutGracePeriodMs ?? DEFAULT_TIMEOUT_GRACE_PERIOD_MS;
    this.#maxDeliveries = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  }

  /**
   * Registers the handler of a message kind, replacing any previous one.
   * @param type The message `type`.
   * @param handler The handler.
   */
  register<TMessage extends BaseMessage>(
    type: TMessage["type"],
    handler: MessageKindHandler<TContextData, TMessage>,
  ): void {
    this.#handlers.set(type, handler);
  }

  /**
   * Adds an internal observer of events and their messages.
   * @param observer The observer.
   * @returns Removes it.
   */
  observe(observer: MessageObserver): () => void {
    this.#observers.add(observer);
    this.#observerList = [...this.#observers];
    return () => {
      this.#observers.delete(observer);
      this.#observerList = [...this.#observers];
    };
  }

  /** The ids and kinds of the messages being processed right now. */
  get inFlight(): { readonly id: string; readonly kind: string }[] {
    return this.#inFlight.values().map((message) => ({ id: message.id, kind: message.type }));
  }

  /**
   * Processes one delivery of a message and returns its outcome.  When
   * the handler's time limit passes, the outcome is decided as soon as it
   * settles, or at the end of the grace period if it does not: a handler
   * that ignores its signal is left running and never holds the worker
   * for good.
   * @param message The message as received.
   * @param run The context data and shutdown signal.
   * @param source The queue it came from and its redelivery, if any.
   * @returns The outcome.
   * @throws {RetryNotStoredError} When the retry could not be stored.
   * @throws {unknown} The handler's error, when the queue retries natively
   *                   or the caller retries (`source.callerRetries`).
   */
  async dispatch(
    message: unknown,
    run: MessageRun<TContextData>,
    source: MessageSource = {},
  ): Promise<Outcome> {
    if (!isBaseMessage(message)) {
      logger.error("Dropped a queue message that is not a Fedwork message: {message}.", {
        message,
      });
      return { type: "dropped", reason: "not a Fedwork message" };
    }
    const handler = this.#handlers.get(message.type);
    const startedAt = Date.now();
    const begun = performance.now();
    let checked: BaseMessage | undefined;
    let outcome: Outcome;
    // Boxed: a handler may throw undefined, which must still reach the queue.
    let rethrow: { readonly error: unknown } | undefined;
    let dropDetails: MalformedMessageError | undefined;
    let timed: TimeLimitedRun<void | UnhandledRun> | undefined;
    let timedOut: TimedOutRun | undefined;
    let unhandled: UnhandledRun | undefined;
    let processSpan: Span | undefined;
    const inFlight = this.#inFlight.add(message);
    try {
      if (handler == null) {
        throw new MalformedMessageError(`no handler for message type ${message.type}`);
      }
      checked = handler.check(message);
      const spanTaskName = handler.taskName?.(checked!);
      // Counted by the queue before this hand-out's handler could run: a
      // count over the limit means the workers that took it before died
      // without an outcome (a poison message), so it is not run again.
      const deliveries = source.redelivery?.deliveryCount ?? source.deliveryCount;
      if (typeof deliveries === "number") {
        const maxDeliveries = handler.maxDeliveries?.(checked!) ?? this.#maxDeliveries;
        if (deliveries > maxDeliveries) {
          throw new PoisonMessageError({
            messageId: message.id,
            kind: message.type,
            ...(spanTaskName == null ? {} : { taskName: spanTaskName }),
            deliveries,
            maxDeliveries,
          });
        }
      }
      const limitMs = handler.timeout?.(checked!) ?? null;
      const attributes: Record<string, string | number> = {
        "fedwork.message.id": message.id,
        "fedwork.message.type": message.type,
        "fedwork.message.attempt": message.attempt,
      };
      if (spanTaskName != null) attributes["fedwork.task.name"] = spanTaskName;
      const result = await withSpan(
        this.#tracer,
        "fedwork.queue.process",
        {
          kind: SpanKind.CONSUMER,
          parent: extractTraceContext(message.traceContext),
          attributes,
        },
        // Not async: the run's own promise rather than one more async
        // layer or then() around it, on every message's path.
        (span) => {
          processSpan = span;
          const yieldSlot = source.redelivery?.yieldSlot;
          if (limitMs == null) {
            // No time limit: the handler runs under the worker's own
            // signal, with no promise of the time limit's around it.
            return handler.run(
              checked!,
              yieldSlot != null
                ? { contextData: run.contextData, signal: run.signal, yieldSlot }
                : run.controller == null
                ? run
                : { contextData: run.contextData, signal: run.signal },
            );
          }
          // A timed-out run rejects with its abort reason, for the span to
          // record it; the outcome is decided below.
          timed = runWithinTimeLimit(
            (signal, controller) =>
              handler.run(
                checked!,
                controller == null
                  ? {
                    contextData: run.contextData,
                    signal,
                    workerSignal: run.signal,
                    ...(yieldSlot && { yieldSlot }),
                  }
                  : {
                    contextData: run.contextData,
                    signal,
                    controller,
                    workerSignal: run.signal,
                    ...(yieldSlot && { yieldSlot }),
                  },
              ),
            {
              limitMs,
              graceMs: this.#graceMs,
              signal: run.signal,
              timeoutError: () =>
                new HandlerTimeoutError({
                  messageId: message.id,
                  kind: message.type,
                  ...(spanTaskName == null ? {} : { taskName: spanTaskName }),
                  timeoutMs: limitMs!,
                }),
            },
          );
          return timed.promise;
        },
      );
      if (isUnhandledRun(result)) unhandled = result;
      outcome = unhandled == null ? COMPLETED : { type: "unhandled", reason: unhandled.reason };
    } catch (error) {
      // A handleMany item has no time limit of its own: its run's, shared
      // with the other items, rejects it with how that run timed out.
      const shared = error instanceof SharedTimeLimitError ? error : undefined;
      timedOut = timed?.timedOut ?? shared?.timedOut;
      // An abandoned run of several messages is logged once, by its first.
      const logAbandoned = timedOut?.abandoned === true &&
        (shared == null || shared.runMessages != null);
      if (error instanceof RunCancelledError) {
        // Cancelled: whatever the handler did after its signal aborted
        // (threw, returned, ran out of time) is set aside, and never retried.
        if (logAbandoned) this.#logAbandoned(message, timedOut!, shared?.runMessages);
        outcome = {
          type: "cancelled",
          ...(error.reason == null ? {} : { reason: error.reason }),
          started: error.started,
        };
      } else if (timedOut != null) {
        if (logAbandoned) this.#logAbandoned(message, timedOut, shared?.runMessages);
        if (source.queue?.nativeRetrial || source.callerRetries) {
          outcome = {
            type: "retrying",
            delay: undefined,
            reason: "timeout",
            error: timedOut.error,
          };
          rethrow = { error: timedOut.error };
        } else {
          [outcome, rethrow] = await this.#retry(
            message,
            handler!,
            checked!,
            source,
            timedOut.error,
            "timeout",
          );
        }
      } else if (error instanceof PoisonMessageError) {
        outcome = { type: "failed", reason: "poison", error };
      } else if (error instanceof MalformedMessageError) {
        dropDetails = error;
        outcome = { type: "dropped", reason: error.message, error: error.cause ?? error };
      } else if (error instanceof PermanentError) {
        outcome = { type: "failed", reason: "permanent", error };
      } else if (
        error instanceof RunPostponedError && !source.callerRetries &&
        (source.redelivery != null || (source.queue ?? handler!.retryQueue(checked!)) != null)
      ) {
        [outcome, rethrow] = await this.#postpone(message, handler!, checked!, source, error);
      } else if (run.signal.aborted && source.queue != null && !source.callerRetries) {
        // Stopped by its worker's shutdown, not by a fault of its own: the
        // queue keeps the message, unchanged, for another worker, and no
        // attempt is spent on it.
        outcome = { type: "retrying", delay: undefined, reason: "shutdown", error };
        rethrow = { error };
      } else if (source.queue?.nativeRetrial || source.callerRetries) {
        outcome = { type: "retrying", delay: undefined, reason: "error", error };
        rethrow = { error };
      } else {
        [outcome, rethrow] = await this.#retry(message, handler!, checked!, source, error, "error");
      }
    } finally {
      this.#inFlight.remove(inFlight);
    }
    const duration = performance.now() - begun;
    const taskName = handler?.taskName?.(checked ?? message);
    if (dropDetails?.stale) {
      // A stale copy of a message that lives on: its outcome is no news.
      logger.debug("Dropped a stale copy of message {messageId} ({messageType}): {reason}", {
        messageId: message.id,
        messageType: message.type,
        taskName,
        reason: outcome.type === "dropped" ? outcome.reason : undefined,
      });
      return outcome;
    }
    this.#log(message, taskName, outcome, dropDetails, source);
    // The event object is built only for someone to receive it: this is the
    // hot path of every message.
    const listener = checked == null ? undefined : handler?.listener?.(checked, outcome.type);
    const listened = listener != null || this.#events.has(outcome.type);
    if (this.#observerList.length > 0 || listened) {
      // The event itself is built only when someone reads it: a listener,
      // or an observer that needs more than the message and its outcome.
      const attempt = new ObservedAttempt(
        message,
        outcome,
        taskName,
        startedAt,
        duration,
        timedOut,
        processSpan,
      );
      // Observers first, so that listeners see their bookkeeping done (a
      // failed task already listed, a deduplication key already free).
      // Awaited only when an observer returns a promise: most return at
      // once for most messages, and each await is a turn of the loop.
      for (const observer of this.#observerList) {
        try {
          const observed = observer(attempt);
          if (observed != null) await observed;
        } catch (error) {
          logger.error("An observer of message {messageId} threw; the outcome stands: {error}", {
            messageId: message.id,
            error,
          });
        }
      }
      if (listened) {
        const emitted = this.#events.emit(attempt.event, listener);
        if (emitted != null) await emitted;
      }
    }
    if (rethrow != null) throw rethrow.error;
    return outcome;
  }

  async #retry(
    message: BaseMessage,
    // deno-lint-ignore no-explicit-any
    handler: MessageKindHandler<TContextData, any>,
    checked: BaseMessage,
    source: MessageSource,
    error: unknown,
    reason: "error" | "timeout",
  ): Promise<[Outcome, { readonly error: unknown } | undefined]> {
    const attempts = message.attempt + 1;
    // A timeout that the policy does not retry says so, rather than
    // "exhausted": what an operator needs to see first.
    const givenUp = reason === "timeout" ? "timeout" : "exhausted";
    let delay: Temporal.Duration | null;
    try {
      const started = parseTimestamp(message.started);
      const elapsed = Number.isNaN(started) ? 0 : Math.max(0, Date.now() - started);
      delay = handler.retryPolicy(checked)({
        elapsedTime: millisecondsToDuration(elapsed),
        attempts,
      });
    } catch (policyError) {
      logger.error("The retry policy for message {messageId} threw {policyError}.", {
        messageId: message.id,
        policyError,
      });
      return [{ type: "failed", reason: givenUp, error }, undefined];
    }
    if (delay == null) return [{ type: "failed", reason: givenUp, error }, undefined];
    // A fresh object nothing else holds: an in-memory queue may keep it
    // without copying it.
    const next = handOverMessage({
      ...message,
      attempt: attempts,
      dueAt: new Date(Date.now() + delayMilliseconds(delay)).toISOString(),
    });
    try {
      if (source.redelivery != null) {
        await source.redelivery.redeliver(next, { delay });
      } else {
        const queue = source.queue ?? handler.retryQueue(checked);
        if (queue == null) {
          logger.error("There is no queue to retry message {messageId} ({messageType}) in.", {
            messageId: message.id,
            messageType: message.type,
          });
          return [{ type: "failed", reason: givenUp, error }, undefined];
        }
        // Not through MessageProducer: a retry keeps its trace context and
        // is not a new enqueue to count.
        await sendToQueue(
          queue,
          [next],
          {
            delay,
            ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
            ...(typeof message.priority === "number" && message.priority !== 0
              ? { priority: message.priority }
              : {}),
          },
        );
      }
    } catch (storeError) {
      logger.error(
        "Could not store the retry of message {messageId} ({messageType}); leaving it to the " +
          "queue to hand out again: {storeError}",
        { messageId: message.id, messageType: message.type, storeError, error },
      );
      return [
        { type: "retrying", delay: undefined, reason, error },
        { error: new RetryNotStoredError(message.id, storeError) },
      ];
    }
    return [{ type: "retrying", delay, reason, error }, undefined];
  }

  /**
   * Puts a message back into its queue, due after the handler's wait, with
   * the same attempt and one more wait: a wait is no failed attempt.
   */
  async #postpone(
    message: BaseMessage,
    // deno-lint-ignore no-explicit-any
    handler: MessageKindHandler<TContextData, any>,
    checked: BaseMessage,
    source: MessageSource,
    error: RunPostponedError,
  ): Promise<[Outcome, { readonly error: unknown } | undefined]> {
    const delay = millisecondsToDuration(error.delayMs);
    const next = handOverMessage({
      ...message,
      ...error.messageFields,
      ...(error.counted ? { waits: (message.waits ?? 0) + 1 } : {}),
      dueAt: new Date(Date.now() + error.delayMs).toISOString(),
    });
    try {
      if (source.redelivery != null) {
        await source.redelivery.redeliver(next, { delay });
      } else {
        // The caller checked that there is one.
        await sendToQueue((source.queue ?? handler.retryQueue(checked))!, [next], {
          delay,
          ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
          ...(typeof message.priority === "number" && message.priority !== 0
            ? { priority: message.priority }
            : {}),
        });
      }
    } catch (storeError) {
      logger.error(
        "Could not store the wait of message {messageId} ({messageType}); leaving it to the " +
          "queue to hand out again: {storeError}",
        { messageId: message.id, messageType: message.type, storeError },
      );
      return [
        { type: "retrying", delay: undefined, reason: "wait", error },
        { error: new RetryNotStoredError(message.id, storeError) },
      ];
    }
    return [{ type: "retrying", delay, reason: "wait", error }, undefined];
  }

  #log(
    message: BaseMessage,
    taskName: string | undefined,
    outcome: Outcome,
    drop: MalformedMessageError | undefined,
    source: MessageSource,
  ): void {
    if (outcome.type === "completed" && !logger.isEnabledFor("debug")) return;
    const properties = {
      messageId: message.id,
      messageType: message.type,
      taskName,
      attempt: message.attempt,
    };
    switch (outcome.type) {
      case "completed":
        logger.debug("Processed message {messageId} ({messageType}).", properties);
        break;
      case "unhandled":
        logger.warn("Nothing handles message {messageId} ({messageType}): {reason}.", {
          ...properties,
          reason: outcome.reason,
        });
        break;
      case "retrying":
        if (outcome.reason === "wait") {
          // A task waiting for its concurrency key or rate waits often, by
          // design: not worth a line at info level each time.
          const cause = outcome.error instanceof RunPostponedError
            ? outcome.error.waitFor
            : "other";
          const text = "Message {messageId} ({messageType}) waits {delay} before attempt " +
            "{attempt}: {reason}";
          const waitProperties = {
            ...properties,
            delay: `${outcome.delay}`,
            reason: (outcome.error as Error).message,
          };
          if (cause === "concurrency" || cause === "rate") logger.debug(text, waitProperties);
          else logger.info(text, waitProperties);
          break;
        }
        if (outcome.reason === "shutdown") {
          logger.info(
            "Message {messageId} ({messageType}) stopped when its worker shut down; it goes " +
              "back to its queue for another worker.",
            properties,
          );
          break;
        }
        logger.warn(
          (outcome.reason === "timeout"
            ? "Message {messageId} ({messageType}) ran out of time on attempt {attempt}; "
            : "Message {messageId} ({messageType}) failed on attempt {attempt}; ") +
            "retrying {delay}: {error}",
          {
            ...properties,
            delay: outcome.delay != null
              ? `in ${outcome.delay}`
              : source.callerRetries
              ? "if the caller sends it again"
              : "when the queue hands it out again",
            error: loggedError(outcome.error),
          },
        );
        break;
      case "dropped":
        logger[drop?.level === "warning" ? "warn" : drop?.level ?? "error"](
          "Dropped message {messageId} ({messageType}): {reason}",
          { ...drop?.details, ...properties, reason: outcome.reason, error: outcome.error },
        );
        break;
      case "cancelled":
        logger.info(
          outcome.started
            ? "Message {messageId} ({messageType}) was cancelled while it ran."
            : "Message {messageId} ({messageType}) was cancelled; it did not run.",
          { ...properties, reason: outcome.reason },
        );
        break;
      case "failed":
        if (outcome.reason === "poison") {
          const poison = outcome.error as PoisonMessageError;
          logger.warn(
            "Quarantined message {messageId} ({messageType}) without running it: the queue " +
              "handed it out {deliveries} times without an outcome (maxDeliveries " +
              "{maxDeliveries}), so its handler likely kills the worker; it is in the " +
              "failed-task store for retryFailedTask().",
            {
              ...properties,
              deliveries: poison.deliveries,
              maxDeliveries: poison.maxDeliveries,
            },
          );
          break;
        }
        logger.error(
          outcome.reason === "permanent"
            ? "Message {messageId} ({messageType}) failed permanently on attempt {attempt}: {error}"
            : outcome.reason === "timeout"
            ? "Gave up on message {messageId} ({messageType}) after {attempts} attempts, the " +
              "last of which ran out of time: {error}"
            : "Gave up on message {messageId} ({messageType}) after {attempts} attempts: {error}",
          { ...properties, attempts: message.attempt + 1, error: loggedError(outcome.error) },
        );
        break;
    }
  }

  /**
   * Logs, once, that a timed-out handler ignored its signal and was left
   * running; and, at debug level, when it settles at last.
   */
  #logAbandoned(message: BaseMessage, timedOut: TimedOutRun, runMessages?: number): void {
    const properties = {
      messageId: message.id,
      messageType: message.type,
      taskName: timedOut.error.taskName,
      attempt: message.attempt,
      timeoutMs: timedOut.error.timeoutMs,
      gracePeriodMs: this.#graceMs,
      ...(runMessages == null ? {} : { runMessages }),
    };
    logger.warn(
      runMessages == null
        ? "The handler of message {messageId} ({messageType}) ignored its signal for " +
          "{gracePeriodMs} ms after its time limit of {timeoutMs} ms; the worker moved on and " +
          "left it running; make the handler stop when its signal aborts."
        : "The handler of message {messageId} ({messageType}) and {runMessages} messages in " +
          "all, run together, ignored its signal for {gracePeriodMs} ms after its time limit of " +
          "{timeoutMs} ms; the worker moved on and left it running; make the handler stop " +
          "when its signal aborts.",
      properties,
    );
    timedOut.late?.then((lateMs) =>
      logger.debug(
        "The abandoned handler of message {messageId} ({messageType}) settled {lateMs} ms " +
          "after its time limit; its outcome had been decided already.",
        { ...properties, lateMs: Math.round(lateMs) },
      )
    );
  }
}

function isUnhandledRun(result: unknown): result is UnhandledRun {
  return typeof result === "object" && result != null &&
    (result as { readonly type?: unknown }).type === "unhandled";
}

function delayMilliseconds(delay: Temporal.Duration): number {
  try {
    return durationToMilliseconds(delay, "delay");
  } catch {
    // The queue rejects such a delay itself; the timestamp is only a metric.
    return 0;
  }
}

/** The outcome of every message that completed: one object, never changed. */
const COMPLETED: Outcome = Object.freeze({ type: "completed" });
