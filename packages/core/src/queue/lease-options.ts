// The option checks every lease-based queue shares: one wording, and the
// option's name in every message.
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";

// setTimeout() takes a signed 32-bit delay.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The listener options a lease-based queue accepts from its users, as
 * passed to {@link resolveLeaseOptions}.
 * @since 0.2.0
 */
export interface LeaseOptionsInput {
  /** How many handlers one `listen()` call runs at once. */
  readonly concurrency?: number;
  /**
   * How many messages a listener claims beyond its free handler slots, to
   * start them without a round trip when a handler finishes.
   */
  readonly prefetch?: number;
  /** How long a claimed message stays invisible to other workers. */
  readonly leaseTime?: DurationInput;
  /** How often an idle listener looks for messages nobody told it about. */
  readonly pollInterval?: DurationInput;
  /** How often the leases of held messages are renewed; a third of `leaseTime` by default. */
  readonly heartbeatInterval?: DurationInput;
}

/**
 * The defaults a backend gives {@link resolveLeaseOptions}.
 * @since 0.2.0
 */
export interface LeaseOptionDefaults {
  /** 1 when omitted. */
  readonly concurrency?: number;
  /** The backend's documented default prefetch. */
  readonly prefetch: number;
  /** The default lease, in milliseconds. */
  readonly leaseMs: number;
  /** The default poll interval, in milliseconds. */
  readonly pollMs: number;
}

/**
 * Validated listener options, durations in milliseconds; what
 * `runLeaseListener()` takes (plus the engine's own settings).
 * @since 0.2.0
 */
export interface ResolvedLeaseOptions {
  readonly concurrency: number;
  readonly prefetch: number;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly heartbeatMs: number;
}

/**
 * Validates a queue's listener options and fills in the defaults.  Every
 * error message names the option, e.g. `The prefetch option must be a
 * non-negative integer; got -1.`
 * @param input The options as the user gave them.
 * @param defaults The backend's defaults.
 * @returns The options in milliseconds.
 * @throws {TypeError} When a duration option is not a duration.
 * @throws {RangeError} When an option is out of range, or the heartbeat
 *                      interval is not shorter than the lease.
 * @since 0.2.0
 */
export function resolveLeaseOptions(
  input: LeaseOptionsInput,
  defaults: LeaseOptionDefaults,
): ResolvedLeaseOptions {
  const concurrency = positiveIntegerOption(
    input.concurrency,
    "concurrency",
    defaults.concurrency ?? 1,
  );
  const prefetch = nonNegativeIntegerOption(input.prefetch, "prefetch", defaults.prefetch);
  const leaseMs = positiveDurationOption(input.leaseTime, "leaseTime", defaults.leaseMs);
  const pollMs = positiveDurationOption(input.pollInterval, "pollInterval", defaults.pollMs);
  const heartbeatMs = input.heartbeatInterval === undefined
    ? Math.max(1, Math.floor(leaseMs / 3))
    : positiveDurationOption(input.heartbeatInterval, "heartbeatInterval", 0);
  if (heartbeatMs >= leaseMs) {
    throw new RangeError(
      `The heartbeatInterval option (${heartbeatMs} ms) must be shorter than the leaseTime ` +
        `option (${leaseMs} ms), or leases would run out between heartbeats.`,
    );
  }
  return { concurrency, prefetch, leaseMs, pollMs, heartbeatMs };
}

/**
 * Checks an option that must be a positive safe integer.
 * @param value The option's value; `undefined` takes the default.
 * @param optionName The option's name, for the error message.
 * @param defaultValue The default.
 * @returns The value.
 * @throws {RangeError} When the value is not a positive integer.
 * @since 0.2.0
 */
export function positiveIntegerOption(
  value: unknown,
  optionName: string,
  defaultValue: number,
): number {
  if (value === undefined) return defaultValue;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(
      `The ${optionName} option must be a positive integer; got ${describe(value)}.`,
    );
  }
  return value;
}

/**
 * Checks an option that must be zero or a positive safe integer.
 * @param value The option's value; `undefined` takes the default.
 * @param optionName The option's name, for the error message.
 * @param defaultValue The default.
 * @returns The value.
 * @throws {RangeError} When the value is not a non-negative integer.
 * @since 0.2.0
 */
export function nonNegativeIntegerOption(
  value: unknown,
  optionName: string,
  defaultValue: number,
): number {
  if (value === undefined) return defaultValue;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
      `The ${optionName} option must be a non-negative integer; got ${describe(value)}.`,
    );
  }
  return value;
}

/**
 * Checks a duration option that must be positive and fit a timer (at most
 * about 24.8 days), and converts it to milliseconds.
 * @param value The option's value; `undefined` takes the default.
 * @param optionName The option's name, for the error message.
 * @param defaultMs The default, in milliseconds.
 * @returns Milliseconds.
 * @throws {TypeError} When the value is not a duration.
 * @throws {RangeError} When the value is zero, negative or too long.
 * @since 0.2.0
 */
export function positiveDurationOption(
  value: DurationInput | undefined,
  optionName: string,
  defaultMs: number,
): number {
  if (value === undefined) return defaultMs;
  let ms: number;
  try {
    ms = durationToMilliseconds(value, optionName);
  } catch (error) {
    if (error instanceof RangeError) {
      throw new RangeError(
        `The ${optionName} option must be a positive duration; ${error.message}`,
        { cause: error },
      );
    }
    throw error;
  }
  if (ms <= 0 || ms > MAX_TIMER_MS) {
    throw new RangeError(
      `The ${optionName} option must be a positive duration of at most about 24 days; ` +
        `got ${ms} ms.`,
    );
  }
  return ms;
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
