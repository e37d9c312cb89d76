import type { Temporal } from "@js-temporal/polyfill";

/**
 * What a {@link RetryPolicy} decides from.
 * @since 0.1.0
 */
export interface RetryContext {
  /** How long it has been since the first attempt started. */
  readonly elapsedTime: Temporal.Duration;
  /** How many attempts have failed so far (1 after the first failure). */
  readonly attempts: number;
}

/**
 * Decides whether and when to retry a failed message: returns the delay
 * before the next attempt, or `null` to give up.  Structurally compatible
 * with Fedify's `RetryPolicy`.
 * @since 0.1.0
 */
export type RetryPolicy = (context: RetryContext) => Temporal.Duration | null;
