// The checks of option values, one wording for all of core and the
// backends: durations that must fit a timer, counts and sizes that must be
// positive (or non-negative) safe integers.  Each message names the option.
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";

/**
 * The longest delay `setTimeout()` takes (a signed 32-bit count of
 * milliseconds, about 24.8 days); a longer one fires at once.
 * @since 0.3.0
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Checks an option that must be a positive safe integer, at most `max`
 * when given.
 * @param value The option's value; `undefined` takes the default.
 * @param optionName The option's name, for the error message.
 * @param defaultValue The default.
 * @param max The largest value allowed (since 0.3.0); none by default.
 * @returns The value.
 * @throws {RangeError} When the value is not a positive integer, or is
 *         above `max`.
 * @since 0.2.0
 */
export function positiveIntegerOption(
  value: unknown,
  optionName: string,
  defaultValue: number,
  max: number = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined) return defaultValue;
  if (
    typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > max
  ) {
    throw new RangeError(
      `The ${optionName} option must be ` +
        (max === Number.MAX_SAFE_INTEGER ? "a positive integer" : `an integer from 1 to ${max}`) +
        `; got ${describe(value)}.`,
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
 * about 24.8 days), and converts it to milliseconds.  A duration that no
 * timer holds (a time to live in a store) passes `maxMs: Infinity`.
 * @param value The option's value; `undefined` takes the default.
 * @param optionName The option's name, for the error message.
 * @param defaultMs The default, in milliseconds.
 * @param maxMs The longest duration allowed, in milliseconds (since
 *              0.3.0); {@link MAX_TIMER_MS} by default.
 * @returns Milliseconds.
 * @throws {TypeError} When the value is not a duration.
 * @throws {RangeError} When the value is zero, negative or too long.
 * @since 0.2.0
 */
export function positiveDurationOption(
  value: DurationInput | undefined,
  optionName: string,
  defaultMs: number,
  maxMs: number = MAX_TIMER_MS,
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
  if (ms <= 0 || ms > maxMs) {
    throw new RangeError(
      `The ${optionName} option must be a positive duration` +
        (maxMs === MAX_TIMER_MS
          ? " of at most about 24 days"
          : maxMs === Infinity
          ? ""
          : ` of at most ${maxMs} ms`) +
        `; got ${ms} ms.`,
    );
  }
  return ms;
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
