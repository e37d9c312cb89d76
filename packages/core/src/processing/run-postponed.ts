// A handler's way of saying "not yet": the message waits and runs again
// later with the same attempt number, for a reason outside it (a remote
// host's Retry-After, a concurrency or rate limit).  The dispatcher stores
// the wait; no attempt is spent.

/**
 * Thrown by a message kind's handler when its message must wait before it
 * runs again, through no fault of its own (a host asked for a pause with
 * `Retry-After`, or a limit is reached).  The dispatcher puts it back into
 * its queue, due after `delayMs`, with the same attempt number and its
 * `waits` count raised by one (unless not `counted`), and fires `retrying`
 * with `reason: "wait"`.  Without a queue (a
 * caller retries) it is handled like any other error.  Internal.
 * @since 0.4.0
 */
export class RunPostponedError extends Error {
  /** How long the message waits, in milliseconds. */
  readonly delayMs: number;
  /**
   * What it waits for, for metrics and listeners: `"retryAfter"` (a host
   * asked for a pause), `"concurrency"` (a task's concurrency key is full),
   * `"rate"` (a task's rate limit) or `"step"` (a durable step sleeps or
   * waits); `"other"` when not said.
   * @since 0.4.0
   */
  readonly waitFor: RunWaitCause;
  /**
   * Fields the copy of the message that waits gets besides its raised
   * `waits` count (a reserved start time, so that the run does not ask
   * again).  Internal.
   * @since 0.4.0
   */
  readonly messageFields?: Readonly<Record<string, unknown>>;
  /**
   * Whether the wait raises the message's `waits` count, which bounds how
   * often a host's `Retry-After` may hold one delivery; a host's own
   * concurrency and rate limits are no request of the host and are not
   * counted.  `true` by default.
   * @since 0.4.0
   */
  readonly counted: boolean;

  /**
   * @param reason Why it waits, in words.
   * @param delayMs How long, in milliseconds (at least 0).
   * @param options `cause`: the error behind the wait, if any; `waitFor`:
   *                what it waits for; `messageFields`: fields to set on
   *                the message that waits; `counted`: whether it raises
   *                the message's `waits` (`true` by default).
   */
  constructor(
    reason: string,
    delayMs: number,
    options?: {
      readonly cause?: unknown;
      readonly waitFor?: RunWaitCause;
      readonly messageFields?: Readonly<Record<string, unknown>>;
      readonly counted?: boolean;
    },
  ) {
    super(reason, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RunPostponedError";
    this.delayMs = Math.max(0, Math.ceil(delayMs));
    this.waitFor = options?.waitFor ?? "other";
    if (options?.messageFields != null) this.messageFields = options.messageFields;
    this.counted = options?.counted ?? true;
  }
}

/**
 * What a postponed run waits for ({@link RunPostponedError.waitFor}).
 * @since 0.4.0
 */
export type RunWaitCause = "retryAfter" | "concurrency" | "rate" | "step" | "other";
