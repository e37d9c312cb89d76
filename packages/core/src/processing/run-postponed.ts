// A handler's way of saying "not yet": the message waits and runs again
// later with the same attempt number, for a reason outside it (a remote
// host's Retry-After, a host's concurrency or rate limit).  The dispatcher
// stores the wait; no attempt is spent.

/**
 * Why a message waits, as the `waitReason` of its `retrying` event and the
 * `fedwork.wait.reason` of the `fedwork.message.waited` metric:
 * `"retry-after"` (a host's `Retry-After`), `"host-concurrency"` (every
 * slot of `hostPolicy.concurrency` taken), `"host-rate"` (its start under
 * `hostPolicy.rate` is later).
 * @since 0.4.0
 */
export type WaitReason = "retry-after" | "host-concurrency" | "host-rate";

/**
 * Thrown by a message kind's handler when its message must wait before it
 * runs again, through no fault of its own (a host asked for a pause with
 * `Retry-After`, or the host's limits are reached).  The dispatcher puts it
 * back into its queue, due after `delayMs`, with the same attempt number
 * and the handler's `fields` set on it, its `waits` count raised by one
 * when `counted`, and fires `retrying` with `reason: "wait"`.  Without a
 * queue (a caller retries) it is handled like any other error.  Internal.
 * @since 0.4.0
 */
export class RunPostponedError extends Error {
  /** How long the message waits, in milliseconds. */
  readonly delayMs: number;
  /** Why it waits. */
  readonly waitReason: WaitReason;
  /** Whether the wait counts in the message's `waits`. */
  readonly counted: boolean;
  /** Fields to set on the message that waits, for its next run. */
  readonly fields: Readonly<Record<string, unknown>> | undefined;

  /**
   * @param reason Why it waits, in words.
   * @param delayMs How long, in milliseconds (at least 0).
   * @param options `cause`: the error behind the wait, if any;
   *                `waitReason`: `"retry-after"` by default; `counted`:
   *                whether the wait raises the message's `waits` (`true`
   *                by default; a host's limits are no request of the host
   *                and are not counted); `fields`: what to set on the
   *                message for its next run.
   */
  constructor(
    reason: string,
    delayMs: number,
    options?: {
      readonly cause?: unknown;
      readonly waitReason?: WaitReason;
      readonly counted?: boolean;
      readonly fields?: Readonly<Record<string, unknown>>;
    },
  ) {
    super(reason, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RunPostponedError";
    this.delayMs = Math.max(0, Math.ceil(delayMs));
    this.waitReason = options?.waitReason ?? "retry-after";
    this.counted = options?.counted ?? true;
    this.fields = options?.fields;
  }
}
