// Time limits of handlers: a handler that never settles must not hold a
// worker slot for good.  At the limit its signal aborts; after a grace
// period the worker stops waiting for it.  What the attempt's outcome is
// the dispatcher decides, as for any failure.
import type { InFlightHandle, InFlightList } from "./in-flight-list.ts";
import { followSignal } from "./signal-followers.ts";
import { MAX_TIMER_MS, positiveDurationOption } from "../options/value-options.ts";
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";
import { type Deadline, DeadlineList } from "./deadlines.ts";
import type { HandlerTimeoutError } from "./errors.ts";

/**
 * How long a handler whose time limit passed gets to stop, after its signal
 * aborted, before the worker abandons it: 5 seconds, the
 * `timeoutGracePeriod` federation option's default.  Enough to roll back a
 * transaction or close a stream; a handler that ignores its signal does
 * not stop in any time.
 * @since 0.3.0
 */
export const DEFAULT_TIMEOUT_GRACE_PERIOD_MS = 5_000;

/**
 * Checks a time limit option: a positive duration that fits a timer (at
 * most about 24.8 days), or `null` for none.
 * @param value The option's value, not `undefined`.
 * @param optionName The option's name, for the error message.
 * @returns The limit in milliseconds, or `null`.
 * @throws {TypeError} When the value is not a duration nor `null`.
 * @throws {RangeError} When the duration is zero, negative, uses calendar
 *                      units or is too long.
 * @since 0.3.0
 */
export function timeLimitToMilliseconds(
  value: DurationInput | null,
  optionName: string,
): number | null {
  if (value === null) return null;
  try {
    return positiveDurationOption(value, optionName, 0);
  } catch (error) {
    const hint = " Pass null for no time limit.";
    if (error instanceof TypeError) throw new TypeError(error.message + hint, { cause: error });
    if (error instanceof RangeError) throw new RangeError(error.message + hint, { cause: error });
    throw error;
  }
}

/**
 * Checks a grace period option: a duration from zero to about 24.8 days.
 * @param value The option's value.
 * @param optionName The option's name, for the error message.
 * @returns Milliseconds.
 * @throws {TypeError} When the value is not a duration.
 * @throws {RangeError} When the duration is negative, uses calendar units
 *                      or is too long.
 * @since 0.3.0
 */
export function gracePeriodToMilliseconds(value: DurationInput, optionName: string): number {
  const ms = durationToMilliseconds(value, optionName);
  if (ms > MAX_TIMER_MS) {
    throw new RangeError(
      `The ${optionName} option must be a duration of at most about 24 days; got ${ms} ms.`,
    );
  }
  return ms;
}

/**
 * What became of a run with a time limit, when it did not simply return
 * or throw before the limit.
 * @since 0.3.0
 */
export interface TimedOutRun {
  /** The signal's abort reason. */
  readonly error: HandlerTimeoutError;
  /**
   * `true` when the handler had not settled at the end of the grace
   * period, and was left running.
   */
  readonly abandoned: boolean;
  /**
   * For an abandoned handler: resolves (never rejects) when it settles at
   * last, with how many milliseconds after the limit; it changes nothing.
   */
  readonly late?: Promise<number>;
}

/**
 * Options for {@link runWithinTimeLimit}.
 * @since 0.3.0
 */
export interface TimeLimitOptions {
  /** The time limit in milliseconds, or `null` for none. */
  readonly limitMs: number | null;
  /** How long to wait for the handler after its signal aborted. */
  readonly graceMs: number;
  /** The worker's signal (shutdown), passed on to the handler's. */
  readonly signal: AbortSignal;
  /** Makes the abort reason, once the limit passed. */
  readonly timeoutError: () => HandlerTimeoutError;
}

/**
 * A run started by {@link runWithinTimeLimit}: its promise, and how it
 * timed out once it did.
 * @typeParam T What the handler resolves with.
 * @since 0.3.0
 */
export interface TimeLimitedRun<T> {
  /**
   * Resolves with what the handler resolved with, or rejects with what it
   * threw, when it settles before the limit.  Once the limit passes, it
   * waits up to the grace period for the handler to settle, whatever it
   * settles with, and rejects with the signal's abort reason (the
   * `timeoutError()`); a handler that settles later changes nothing (its
   * rejection is caught).
   */
  readonly promise: Promise<T>;
  /**
   * How the run timed out, set when `promise` rejects because the limit
   * passed; `undefined` otherwise.
   */
  readonly timedOut: TimedOutRun | undefined;
}

/**
 * Runs a handler with a signal of its own, which aborts when the worker's
 * signal does or when the time limit passes.
 * @param run Starts the handler with its signal and, when the run has a
 *            signal of its own (a limit), the controller that aborts it.
 * @param options The limit, grace period, worker's signal and abort reason.
 * @returns The run: its promise, and how it timed out.  One object for
 *          both, rather than a promise of either, so that a run that ends
 *          in time (every message's path) costs no promise more than the
 *          handler's and the time limit's own.
 * @since 0.3.0
 */
export function runWithinTimeLimit<T>(
  run: (signal: AbortSignal, controller?: AbortController) => Promise<T>,
  options: TimeLimitOptions,
): TimeLimitedRun<T> {
  const { limitMs, signal: parent } = options;
  if (limitMs == null) return { promise: run(parent), timedOut: undefined };
  const controller = new AbortController();
  const following = followSignal(parent, controller);
  const handle = following?.add(controller);
  let running: Promise<T>;
  try {
    running = run(controller.signal, controller);
  } catch (error) {
    if (handle != null) following!.remove(handle);
    return { promise: Promise.reject(error), timedOut: undefined };
  }
  return new TimedRun(running, limitMs, options, controller, following, handle);
}

/** The deadlines of every run with a time limit, in this process. */
const deadlines = new DeadlineList();

/**
 * The state of one run with a time limit, from its start until it settles
 * (or is abandoned).  A class rather than closures over shared variables:
 * one is made for every message with a time limit.
 */
class TimedRun<T> implements TimeLimitedRun<T> {
  readonly promise: Promise<T>;
  timedOut: TimedOutRun | undefined;
  #state: "running" | "grace" | "decided" = "running";
  readonly #options: TimeLimitOptions;
  readonly #controller: AbortController;
  /** The runs following the worker signal, and this one's place there. */
  readonly #following: InFlightList<AbortController> | undefined;
  readonly #handle: InFlightHandle<AbortController> | undefined;
  #resolve!: (value: T) => void;
  #reject!: (reason: unknown) => void;
  readonly #deadline: Deadline;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  #error: HandlerTimeoutError | undefined;
  #limitPassedAt = 0;
  #resolveLate: ((ms: number) => void) | undefined;

  constructor(
    running: Promise<T>,
    limitMs: number,
    options: TimeLimitOptions,
    controller: AbortController,
    following: InFlightList<AbortController> | undefined,
    handle: InFlightHandle<AbortController> | undefined,
  ) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#options = options;
    this.#controller = controller;
    this.#following = following;
    this.#handle = handle;
    this.#deadline = deadlines.after(limitMs, () => this.#limitPassed());
    running.then((value) => this.#settled(false, value), (reason) => this.#settled(true, reason));
  }

  #limitPassed(): void {
    if (this.#state !== "running") return;
    this.#state = "grace";
    this.#limitPassedAt = performance.now();
    const error = this.#error = this.#options.timeoutError();
    this.#controller.abort(error);
    // Rare (the limit passed), so a timer of its own.
    this.#graceTimer = setTimeout(() => {
      if (this.#state !== "grace") return;
      this.#decide();
      const late = new Promise<number>((resolve) => this.#resolveLate = resolve);
      this.timedOut = { error, abandoned: true, late };
      this.#reject(error);
    }, this.#options.graceMs);
  }

  #decide(): void {
    this.#state = "decided";
    this.#deadline.cancel();
    if (this.#graceTimer != null) clearTimeout(this.#graceTimer);
    if (this.#handle != null) this.#following!.remove(this.#handle);
  }

  /** The handler settled: `outcome` is its value, or its error when `failed`. */
  #settled(failed: boolean, outcome: unknown): void {
    if (this.#state === "decided") {
      this.#resolveLate?.(performance.now() - this.#limitPassedAt);
      return;
    }
    const timedOut = this.#state === "grace";
    this.#decide();
    if (timedOut) {
      this.timedOut = { error: this.#error!, abandoned: false };
      this.#reject(this.#error);
    } else if (failed) {
      this.#reject(outcome);
    } else {
      this.#resolve(outcome as T);
    }
  }
}

/**
 * How a handler that runs several messages at once (a `handleMany` run)
 * rejects each message's own run when the time limit they share passed:
 * the dispatcher decides that message's outcome as if a time limit of its
 * own had passed (a `timeout`, retried by its policy; `abandoned` when the
 * shared run ignored its signal through the grace period).  Internal.
 * @since 0.4.0
 */
export class SharedTimeLimitError extends Error {
  /** How the shared run timed out, with this message's own timeout error. */
  readonly timedOut: TimedOutRun;
  /**
   * How many messages the run had when this one speaks for it (its first:
   * an abandoned run is logged once, with this count), or `undefined`.
   */
  readonly runMessages: number | undefined;

  /**
   * @param timedOut How the shared run timed out, for this message.
   * @param runMessages The run's number of messages, given to one of them.
   */
  constructor(timedOut: TimedOutRun, runMessages?: number) {
    super(timedOut.error.message, { cause: timedOut.error });
    this.name = "SharedTimeLimitError";
    this.timedOut = timedOut;
    this.runMessages = runMessages;
  }
}
