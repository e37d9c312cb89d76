import { getLogger } from "@logtape/logtape";
import type { Temporal } from "@js-temporal/polyfill";
import type { RunWaitCause } from "./run-postponed.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * What every lifecycle event tells about the message it concerns.
 * @since 0.2.0
 */
export interface MessageEventBase {
  /** The message's id, kept across retries. */
  readonly messageId: string;
  /** The message kind: `"inbox"`, `"outbox"`, `"fanout"` or `"task"`. */
  readonly kind: string;
  /** The task's name, for task messages. */
  readonly taskName?: string;
  /** The attempt that just ran, starting at 0. */
  readonly attempt: number;
  /** When the message was first enqueued. */
  readonly enqueuedAt: Date;
  /** How long this attempt ran, in milliseconds. */
  readonly duration: number;
}

/**
 * A message's handler returned.
 * @since 0.2.0
 */
export interface MessageCompletedEvent extends MessageEventBase {
  /** Always `"completed"`. */
  readonly type: "completed";
}

/**
 * A message was valid, but nothing was registered to handle it: an
 * activity whose type no inbox listener handles.  It is done with and not
 * retried, like a completed message, but no code of the application ran.
 * @since 0.3.0
 */
export interface MessageUnhandledEvent extends MessageEventBase {
  /** Always `"unhandled"`. */
  readonly type: "unhandled";
  /** What had no handler, in words (e.g. "no inbox listener handles Like"). */
  readonly reason: string;
}

/**
 * A message's handler failed and another attempt is scheduled.
 * @since 0.2.0
 */
export interface MessageRetryingEvent extends MessageEventBase {
  /** Always `"retrying"`. */
  readonly type: "retrying";
  /**
   * How long until the next attempt; `undefined` when the queue decides
   * (native retrial, or a retry that could not be scheduled and is left to
   * the queue's redelivery).
   */
  readonly delay: Temporal.Duration | undefined;
  /**
   * `"error"` when the handler threw; `"timeout"` when its time limit
   * passed (`error` is then a `HandlerTimeoutError`); `"shutdown"` (since
   * 0.4.0) when it ended after its worker's shutdown aborted its signal:
   * the message went back to its queue unchanged (`delay` is `undefined`
   * and no attempt was spent), for another worker to run; `"wait"` (since
   * 0.4.0) when it must wait before it runs again, through no fault of its
   * own (a host's `Retry-After`): it runs again after `delay` with the same
   * `attempt`, and `error` says why it waits.
   * @since 0.3.0
   */
  readonly reason: "error" | "timeout" | "shutdown" | "wait";
  /**
   * With `reason: "wait"`: what it waits for: `"retryAfter"` (its host's
   * `Retry-After`), `"concurrency"` (its concurrency key is full, or for a
   * delivery every slot of its host under `hostPolicy.concurrency` is
   * taken), `"rate"` (its start under a rate limit or `hostPolicy.rate` is
   * later), `"step"` (a durable step sleeps or waits), or `"other"`.
   * Absent otherwise.
   * @since 0.4.0
   */
  readonly waitFor?: RunWaitCause;
  /**
   * With `reason: "timeout"`: `true` when the handler ignored its signal
   * through the grace period and was left running; `false` when it
   * stopped.  Absent otherwise.
   * @since 0.3.0
   */
  readonly abandoned?: boolean;
  /** The handler's error. */
  readonly error: unknown;
}

/**
 * A message failed for good: it is not tried again.  Fires once per
 * message, never for an attempt that will be retried.
 * @since 0.2.0
 */
export interface MessageFailedEvent extends MessageEventBase {
  /** Always `"failed"`. */
  readonly type: "failed";
  /**
   * `"permanent"` when the handler threw a `PermanentError`;
   * `"exhausted"` when the retry policy gave up; `"timeout"` (since 0.3.0)
   * when the retry policy gave up after an attempt that ran out of time
   * (`error` is then a `HandlerTimeoutError`); `"poison"` (since 0.4.0)
   * when the queue had handed the message out more than `maxDeliveries`
   * times without an outcome (its workers died), so it was quarantined in
   * the failed-task store without running (`error` is then a
   * `PoisonMessageError`, `attempt` the attempt that never ran and
   * `duration` 0).
   */
  readonly reason: "permanent" | "exhausted" | "timeout" | "poison";
  /**
   * With `reason: "timeout"`: `true` when the handler ignored its signal
   * through the grace period and was left running; `false` when it
   * stopped.  Absent otherwise.
   * @since 0.3.0
   */
  readonly abandoned?: boolean;
  /** The last error. */
  readonly error: unknown;
}

/**
 * A message was discarded without running (or finishing) its handler,
 * because it cannot be processed: malformed, an unknown task, a payload
 * that fails its schema.
 * @since 0.2.0
 */
export interface MessageDroppedEvent extends MessageEventBase {
  /** Always `"dropped"`. */
  readonly type: "dropped";
  /** Why, in words. */
  readonly reason: string;
  /** The error behind the reason, if any. */
  readonly error?: unknown;
}

/**
 * A task was cancelled (`cancelTask()`): a worker took it off its queue
 * without running it, or its handler ended after its signal aborted.  It
 * is not retried.
 * @since 0.3.0
 */
export interface MessageCancelledEvent extends MessageEventBase {
  /** Always `"cancelled"`. */
  readonly type: "cancelled";
  /** The reason given to `cancelTask()`, if any. */
  readonly reason?: string;
  /** Whether the handler had started (its signal aborted) or not. */
  readonly started: boolean;
}

/**
 * Any lifecycle event.  Exactly one fires per attempt of a message.
 * @since 0.2.0
 */
export type MessageEvent =
  | MessageCompletedEvent
  | MessageUnhandledEvent
  | MessageRetryingEvent
  | MessageFailedEvent
  | MessageDroppedEvent
  | MessageCancelledEvent;

/**
 * The `type` of a {@link MessageEvent}.
 * @since 0.2.0
 */
export type MessageEventType = MessageEvent["type"];

/**
 * A listener for lifecycle events of one type.  A listener that throws (or
 * rejects) is logged and changes nothing.
 * @typeParam T The event type.
 * @since 0.2.0
 */
export type MessageEventListener<T extends MessageEventType = MessageEventType> = (
  event: Extract<MessageEvent, { type: T }>,
) => void | Promise<void>;

/**
 * Listeners per event type, and emitting to them so that a failing
 * listener is logged and never changes the outcome.
 * @since 0.2.0
 */
export class MessageEventHub {
  readonly #listeners = new Map<MessageEventType, Set<MessageEventListener>>();

  /**
   * Adds a listener: what `federation.on()` does.
   * @param type The event type.
   * @param listener The listener.
   * @returns Removes the listener.
   * @throws {TypeError} When the type is unknown or the listener is not a
   *         function (since 0.4.0).
   */
  on<T extends MessageEventType>(type: T, listener: MessageEventListener<T>): () => void {
    if (typeof listener !== "function") {
      throw new TypeError(`The listener given to on(${JSON.stringify(type)}) must be a function.`);
    }
    if (!["completed", "unhandled", "retrying", "failed", "dropped", "cancelled"].includes(type)) {
      throw new TypeError(
        `Unknown event type ${JSON.stringify(type)}; the events are completed, unhandled, ` +
          "retrying, failed, dropped and cancelled.",
      );
    }
    let set = this.#listeners.get(type);
    if (set == null) this.#listeners.set(type, set = new Set());
    set.add(listener as unknown as MessageEventListener);
    return () => set.delete(listener as unknown as MessageEventListener);
  }

  /** Whether anyone listens to events of `type`. */
  has(type: MessageEventType): boolean {
    return (this.#listeners.get(type)?.size ?? 0) > 0;
  }

  /**
   * Calls the listeners of `event.type`, then `extra` (a per-task hook),
   * waiting for each.  Errors are logged, never thrown.
   * @param event The event.
   * @param extra One more listener, if any.
   * @returns When the listeners are done, or `undefined` at once when
   *          there is none (no promise made on a message's path for
   *          nobody).
   */
  emit(event: MessageEvent, extra?: MessageEventListener): Promise<void> | undefined {
    const listeners = this.#listeners.get(event.type);
    if ((listeners == null || listeners.size === 0) && extra == null) return undefined;
    return this.#emit(event, listeners, extra);
  }

  async #emit(
    event: MessageEvent,
    listeners: ReadonlySet<MessageEventListener> | undefined,
    extra: MessageEventListener | undefined,
  ): Promise<void> {
    if (listeners != null) {
      for (const listener of [...listeners]) await callSafely(listener, event);
    }
    if (extra != null) await callSafely(extra, event);
  }
}

async function callSafely(listener: MessageEventListener, event: MessageEvent): Promise<void> {
  try {
    await listener(event);
  } catch (error) {
    logger.error(
      "A {eventType} event listener threw for message {messageId}; the outcome stands: {error}",
      { eventType: event.type, messageId: event.messageId, taskName: event.taskName, error },
    );
  }
}
