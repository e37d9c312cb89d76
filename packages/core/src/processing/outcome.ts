import type { Temporal } from "@js-temporal/polyfill";

/**
 * What became of one delivery of a queue message, as decided by the
 * dispatcher (the one place that decides):
 * - `completed`: the handler returned;
 * - `unhandled` (since 0.3.0): the message was valid, but nothing was
 *   registered to handle it (an activity of a type no inbox listener
 *   handles); it is done with and not retried, but nothing ran;
 * - `retrying`: the handler failed (`reason: "error"`) or ran out of time
 *   (`reason: "timeout"`, since 0.3.0) and another attempt is scheduled
 *   (`delay` is `undefined` when the queue retries natively and picks the
 *   delay itself), or its worker shut down under it (`reason:
 *   "shutdown"`, since 0.4.0: the message goes back to its queue
 *   unchanged, for another worker, with no attempt spent), or it must wait
 *   (`reason: "wait"`, since 0.4.0: a host's `Retry-After`; it runs again
 *   after `delay` with the same attempt number);
 * - `dropped`: the message cannot be processed (malformed, unknown task,
 *   invalid payload) and is discarded without retrying;
 * - `failed`: the message failed for good, because its error was a
 *   `PermanentError` (`reason: "permanent"`) or the retry policy gave up
 *   (`reason: "exhausted"`, or `"timeout"` when the last attempt ran out
 *   of time, since 0.3.0), or the queue had handed it out more than
 *   `maxDeliveries` times without an outcome and it was quarantined
 *   without running (`reason: "poison"`, since 0.4.0);
 * - `cancelled` (since 0.3.0): the task was cancelled before it ran, or
 *   its handler ended after its signal aborted for a cancellation; it is
 *   not retried.
 * @since 0.2.0
 */
export type Outcome =
  | { readonly type: "completed" }
  | { readonly type: "unhandled"; readonly reason: string }
  | {
    readonly type: "retrying";
    readonly delay: Temporal.Duration | undefined;
    readonly reason: "error" | "timeout" | "shutdown" | "wait";
    readonly error: unknown;
  }
  | { readonly type: "dropped"; readonly reason: string; readonly error?: unknown }
  | { readonly type: "cancelled"; readonly reason?: string; readonly started: boolean }
  | {
    readonly type: "failed";
    readonly reason: "permanent" | "exhausted" | "timeout" | "poison";
    readonly error: unknown;
  };

/**
 * The `type` of an {@link Outcome}.
 * @since 0.2.0
 */
export type OutcomeType = Outcome["type"];
