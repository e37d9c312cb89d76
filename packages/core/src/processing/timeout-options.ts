import {
  DEFAULT_TIMEOUT_GRACE_PERIOD_MS,
  gracePeriodToMilliseconds,
  timeLimitToMilliseconds,
} from "./time-limit.ts";
import type { DurationInput } from "../time/duration.ts";
import { checkFederationOption } from "../options/federation-option-error.ts";

/**
 * The default time limit of one task attempt: 15 minutes.  Tasks are where
 * long work goes (imports, media, digests), so the default leaves them a
 * wide margin; a task that needs longer says so with its own `timeout`.
 * @since 0.3.0
 */
export const DEFAULT_TASK_TIMEOUT_MS = 15 * 60_000;

/**
 * The default time limit of processing one received activity: 5 minutes.
 * An inbox listener writes to a database and may fetch a few remote
 * documents, each bounded by its own request limit (10 seconds by
 * default); minutes mean it hangs.
 * @since 0.3.0
 */
export const DEFAULT_INBOX_TIMEOUT_MS = 5 * 60_000;

/**
 * The default time limit of one delivery (or fan-out) attempt: 2 minutes,
 * four times the 30 seconds its two knocks may take at their own request
 * limit (15 seconds each).
 * @since 0.3.0
 */
export const DEFAULT_OUTBOX_TIMEOUT_MS = 2 * 60_000;

/**
 * The federation options that limit how long a queued message's handler
 * may run.  Part of `FederationOptions`.  Each limit is a duration or
 * `null` for none; when it passes, the handler's signal aborts with a
 * `HandlerTimeoutError`, the attempt fails with the reason `"timeout"` and
 * goes to the retry policy, and a handler that has not stopped after
 * `timeoutGracePeriod` is left running while the worker takes its next
 * message.  They apply to messages the workers (and
 * `processQueuedMessage()`) process, not to work done in a request without
 * a queue.
 * @since 0.3.0
 */
export interface FederationTimeoutOptions {
  /**
   * The time limit of one task attempt, for tasks without a `timeout` of
   * their own; `ctx.task.signal` aborts when it passes.
   * @default `{ minutes: 15 }`
   * @since 0.3.0
   */
  readonly taskTimeout?: DurationInput | null;

  /**
   * The time limit of processing one received activity from the inbox
   * queue: parsing it and running its inbox listener (and the inbox error
   * handler); `ctx.signal` aborts when it passes.
   * @default `{ minutes: 5 }`
   * @since 0.3.0
   */
  readonly inboxTimeout?: DurationInput | null;

  /**
   * The time limit of one delivery attempt from the outbox queue as a
   * whole (the sender's keys, signing, both knocks, redirects), and of
   * expanding one fan-out message.  Each request within it also has its
   * own, shorter limit.
   * @default `{ minutes: 2 }`
   * @since 0.3.0
   */
  readonly outboxTimeout?: DurationInput | null;

  /**
   * How long a handler whose time limit passed gets to stop, after its
   * signal aborted, before the worker abandons it: leaves it running,
   * logs a warning, counts it in `fedwork.message.abandoned` and takes
   * its next message.  May be zero.
   * @default `{ seconds: 5 }`
   * @since 0.3.0
   */
  readonly timeoutGracePeriod?: DurationInput;
}

/**
 * {@link FederationTimeoutOptions} checked, in milliseconds.
 * @since 0.3.0
 */
export interface ResolvedTimeoutOptions {
  readonly taskTimeoutMs: number | null;
  readonly inboxTimeoutMs: number | null;
  readonly outboxTimeoutMs: number | null;
  readonly timeoutGracePeriodMs: number;
}

/**
 * Checks the time limit options and fills in the defaults.
 * @param options The federation options.
 * @returns The limits and the grace period, in milliseconds.
 * @throws {FederationOptionError} When one is not a positive duration
 *         (nor `null`); the message names it.
 * @since 0.3.0
 */
export function resolveTimeoutOptions(options: FederationTimeoutOptions): ResolvedTimeoutOptions {
  return {
    taskTimeoutMs: timeLimit("taskTimeout", options.taskTimeout, DEFAULT_TASK_TIMEOUT_MS),
    inboxTimeoutMs: timeLimit("inboxTimeout", options.inboxTimeout, DEFAULT_INBOX_TIMEOUT_MS),
    outboxTimeoutMs: timeLimit("outboxTimeout", options.outboxTimeout, DEFAULT_OUTBOX_TIMEOUT_MS),
    timeoutGracePeriodMs: options.timeoutGracePeriod === undefined
      ? DEFAULT_TIMEOUT_GRACE_PERIOD_MS
      : checkFederationOption(
        "timeoutGracePeriod",
        () => gracePeriodToMilliseconds(options.timeoutGracePeriod!, "timeoutGracePeriod"),
      ),
  };
}

function timeLimit(
  name: string,
  value: DurationInput | null | undefined,
  defaultMs: number,
): number | null {
  if (value === undefined) return defaultMs;
  return checkFederationOption(name, () => timeLimitToMilliseconds(value, name));
}
