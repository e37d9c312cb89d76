// A handler's way of saying "not yet": the message waits and runs again
// later with the same attempt number, for a reason outside it (a remote
// host's Retry-After).  The dispatcher stores the wait; no attempt is spent.

/**
 * Thrown by a message kind's handler when its message must wait before it
 * runs again, through no fault of its own (a host asked for a pause with
 * `Retry-After`).  The dispatcher puts it back into its queue, due after
 * `delayMs`, with the same attempt number and its `waits` count raised
 * by one, and fires `retrying` with `reason: "wait"`.  Without a queue (a
 * caller retries) it is handled like any other error.  Internal.
 * @since 0.4.0
 */
export class RunPostponedError extends Error {
  /** How long the message waits, in milliseconds. */
  readonly delayMs: number;
  /**
   * Fields the message waits with, replacing its own (a task's durable
   * steps carry their generation in one); none by default.
   */
  readonly fields: Readonly<Record<string, unknown>> | undefined;

  /**
   * @param reason Why it waits, in words.
   * @param delayMs How long, in milliseconds (at least 0).
   * @param options `cause`: the error behind the wait, if any; `fields`:
   *                message fields to set on the waiting message.
   */
  constructor(
    reason: string,
    delayMs: number,
    options?: {
      readonly cause?: unknown;
      readonly fields?: Readonly<Record<string, unknown>>;
    },
  ) {
    super(reason, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RunPostponedError";
    this.delayMs = Math.max(0, Math.ceil(delayMs));
    this.fields = options?.fields;
  }
}
