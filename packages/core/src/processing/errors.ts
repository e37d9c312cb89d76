import { markRemoteFailureClass } from "./remote-failure.ts";

/**
 * Thrown by a task handler, an inbox listener or a delivery to say that
 * trying again cannot help: the message fails for good at once, whatever
 * the retry policy says.  `onError` hooks still run, and the `failed`
 * lifecycle event fires with `reason: "permanent"`.
 *
 * @example
 * ```ts
 * import { PermanentError } from "@fedwork/core";
 *
 * async function fetchProfile(url: URL): Promise<unknown> {
 *   const response = await fetch(url);
 *   if (response.status === 410) {
 *     throw new PermanentError(`${url} is gone.`);
 *   }
 *   return await response.json();
 * }
 * ```
 * @since 0.2.0
 */
export class PermanentError extends Error {
  /**
   * @param message What went wrong.
   * @param options `cause`: the underlying error, if any.
   */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PermanentError";
  }
}

/**
 * Thrown by a message kind's handler when its message was cancelled: before
 * it ran (`started: false`), or while it ran (its signal aborted, and
 * whatever the handler did after that is set aside).  The dispatcher ends
 * the message as `cancelled` and never retries it.  Internal.
 * @since 0.3.0
 */
export class RunCancelledError extends Error {
  /** The reason given for the cancellation, if any. */
  readonly reason: string | undefined;
  /** Whether the handler had started. */
  readonly started: boolean;

  /**
   * @param messageId The cancelled message.
   * @param options The reason, whether the handler had started, and the
   *                handler's own error, if it threw one.
   */
  constructor(
    messageId: string,
    options: { readonly reason?: string; readonly started: boolean; readonly cause?: unknown },
  ) {
    super(
      `Message ${messageId} was cancelled${options.reason == null ? "" : `: ${options.reason}`}.`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "RunCancelledError";
    this.reason = options.reason;
    this.started = options.started;
  }
}

/**
 * Thrown by a message kind's handler when the message cannot be processed
 * as it is: malformed wire data, an unknown task, a payload that fails its
 * schema.  Running it again would fail the same way, so the dispatcher
 * drops it with {@link MalformedMessageError.message} as the logged reason.
 * @since 0.2.0
 */
export class MalformedMessageError extends Error {
  /** Structured details logged with the drop (e.g. schema issues). */
  readonly details: Readonly<Record<string, unknown>>;
  /**
   * The level the drop is logged at: `"error"` by default; `"warning"` for
   * drops that are expected now and then (a task this worker does not
   * know yet during a rolling deployment); `"info"` (since 0.4.0) for drops
   * that are the intended outcome (a debounced task a later enqueue
   * superseded).
   */
  readonly level: "info" | "warning" | "error";
  /**
   * Whether the message is a stale copy of one that lives on (a durable
   * step's continuation a wake-up superseded, since 0.4.0): dropped
   * without an event, so that the task's status and records stay those of
   * the live copy.
   */
  readonly stale: boolean;

  /**
   * @param reason Why the message cannot be processed.
   * @param options `cause`: the underlying error; `details`: structured
   *                properties for the log; `level`: the log level;
   *                `stale`: drop it without an event.
   */
  constructor(
    reason: string,
    options: {
      readonly cause?: unknown;
      readonly details?: Readonly<Record<string, unknown>>;
      readonly level?: "info" | "warning" | "error";
      readonly stale?: boolean;
    } = {},
  ) {
    super(reason, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MalformedMessageError";
    this.details = options.details ?? {};
    this.level = options.level ?? "error";
    this.stale = options.stale ?? false;
  }
}

/**
 * Why a handler's signal aborted when its time limit passed (the
 * federation's `taskTimeout`, `inboxTimeout` or `outboxTimeout`, or a
 * task's own `timeout`), and the error of the attempt's `retrying` or
 * `failed` event (`reason: "timeout"`).  A request made with the signal
 * rejects with it, so a handler that passes its signal on stops by itself.
 *
 * @example
 * ```ts
 * import { HandlerTimeoutError } from "@fedwork/core";
 *
 * async function step(signal: AbortSignal): Promise<void> {
 *   try {
 *     await fetch("https://example.com/slow", { signal });
 *   } catch (error) {
 *     if (error instanceof HandlerTimeoutError) console.warn(error.message);
 *     throw error;
 *   }
 * }
 * ```
 * @since 0.3.0
 */
export class HandlerTimeoutError extends Error {
  /** The message whose attempt ran out of time. */
  readonly messageId: string;
  /** Its kind: `"inbox"`, `"outbox"`, `"fanout"` or `"task"`. */
  readonly kind: string;
  /** The task's name, for task messages. */
  readonly taskName?: string;
  /** The time limit that passed, in milliseconds. */
  readonly timeoutMs: number;

  /**
   * @param options The message's id, kind and task name, and the limit.
   */
  constructor(options: {
    readonly messageId: string;
    readonly kind: string;
    readonly taskName?: string;
    readonly timeoutMs: number;
  }) {
    const what = options.taskName == null
      ? `The ${options.kind} message ${options.messageId}`
      : `The task ${JSON.stringify(options.taskName)} (message ${options.messageId})`;
    super(`${what} did not finish within its time limit of ${options.timeoutMs} ms.`);
    this.name = "HandlerTimeoutError";
    this.messageId = options.messageId;
    this.kind = options.kind;
    if (options.taskName != null) this.taskName = options.taskName;
    this.timeoutMs = options.timeoutMs;
  }
}

/**
 * The error of a `failed` event with `reason: "poison"` (and of the
 * failed-task record it leaves): the queue had handed the message out more
 * than `maxDeliveries` times without any outcome being recorded — each
 * worker that took it died (killed, out of memory) or lost its lease
 * before it finished — so it was quarantined in the failed-task store
 * instead of being run again.  Replay it with `retryFailedTask()` once the
 * cause is fixed.
 *
 * @example
 * ```ts
 * import { createFederation, MemoryKvStore, PoisonMessageError } from "@fedwork/core";
 *
 * const federation = createFederation<void>({ kv: new MemoryKvStore() });
 * federation.on("failed", (event) => {
 *   if (event.error instanceof PoisonMessageError) {
 *     console.warn(`${event.messageId} was handed out ${event.error.deliveries} times`);
 *   }
 * });
 * ```
 * @since 0.4.0
 */
export class PoisonMessageError extends Error {
  /** The quarantined message. */
  readonly messageId: string;
  /** Its kind: `"inbox"`, `"outbox"`, `"fanout"` or `"task"`. */
  readonly kind: string;
  /** The task's name, for task messages. */
  readonly taskName?: string;
  /** How many times the queue had handed it out, this hand-out included. */
  readonly deliveries: number;
  /** The limit it went over (`maxDeliveries`). */
  readonly maxDeliveries: number;

  /**
   * @param options The message's id, kind and task name, its hand-out
   *                count and the limit.
   */
  constructor(options: {
    readonly messageId: string;
    readonly kind: string;
    readonly taskName?: string;
    readonly deliveries: number;
    readonly maxDeliveries: number;
  }) {
    const what = options.taskName == null
      ? `The ${options.kind} message ${options.messageId}`
      : `The task ${JSON.stringify(options.taskName)} (message ${options.messageId})`;
    super(
      `${what} was handed out ${options.deliveries} times without an outcome (more than ` +
        `maxDeliveries, ${options.maxDeliveries}): its handler likely kills the worker ` +
        "process; it was quarantined instead of being run again.",
    );
    this.name = "PoisonMessageError";
    this.messageId = options.messageId;
    this.kind = options.kind;
    if (options.taskName != null) this.taskName = options.taskName;
    this.deliveries = options.deliveries;
    this.maxDeliveries = options.maxDeliveries;
  }
}

// A handler that ran out of time waited, almost always, on a remote party;
// the stack of the timer that fired says nothing.
markRemoteFailureClass(HandlerTimeoutError);
