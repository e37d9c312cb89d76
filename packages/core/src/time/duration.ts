import { Temporal } from "@js-temporal/polyfill";

/**
 * A length of time as Fedwork's options accept it: a `Temporal.Duration`
 * (native or from `@js-temporal/polyfill`), a duration-like object such as
 * `{ seconds: 30 }`, or an ISO 8601 duration string such as `"PT30S"`.
 * @since 0.1.0
 */
export type DurationInput = Temporal.Duration | Temporal.DurationLike | string;

/**
 * Converts a duration to whole milliseconds.
 *
 * Calendar units (years, months, weeks) are rejected because their length
 * depends on a reference date; days count as 24 hours.
 * @param duration The duration.
 * @param optionName The name of the option the duration came from, used in
 *                   error messages (e.g. `"delay"`).
 * @returns The duration in whole milliseconds, sub-millisecond parts
 *          rounded up (never negative).
 * @throws {TypeError} When the value is not a duration.
 * @throws {RangeError} When the duration is negative or uses calendar units.
 * @since 0.1.0
 */
export function durationToMilliseconds(
  duration: DurationInput,
  optionName = "duration",
): number {
  let parsed: Temporal.Duration;
  try {
    // Temporal.Duration.from() accepts both native and polyfilled Duration
    // objects and plain duration-like property bags.
    parsed = Temporal.Duration.from(duration as Temporal.DurationLike);
  } catch (error) {
    throw new TypeError(
      `The ${optionName} option must be a Temporal.Duration, a duration-like object ` +
        `such as { seconds: 30 } or an ISO 8601 duration such as "PT30S"; got ` +
        `${describeValue(duration)}.`,
      { cause: error },
    );
  }
  if (parsed.sign < 0) {
    throw new RangeError(`The ${optionName} option must not be negative; got ${parsed}.`);
  }
  if (parsed.years !== 0 || parsed.months !== 0 || parsed.weeks !== 0) {
    throw new RangeError(
      `The ${optionName} option must not use years, months or weeks (their length ` +
        `depends on a date); got ${parsed}.`,
    );
  }
  // Sub-millisecond parts are rounded up so that a delay is never shortened.
  return Math.ceil(parsed.total({ unit: "millisecond" }));
}

/**
 * Converts any {@link DurationInput} to a `Temporal.Duration`: the runtime's
 * own `Temporal.Duration` where it has one (Deno, Bun), else
 * `@js-temporal/polyfill`'s.  A value that already is a `Temporal.Duration`
 * (native or polyfilled) is returned as is.
 *
 * Fedwork hands durations in this form to every `MessageQueue` and
 * `KvStore`, so that adapters written for Fedify, which call methods such
 * as `total()` or `round()` on them, work whatever form the user wrote.
 * @param duration The duration.
 * @param optionName The name of the option the duration came from, used in
 *                   error messages (e.g. `"delay"`).
 * @returns The duration as a `Temporal.Duration`.
 * @throws {TypeError} When the value is not a duration.
 * @throws {RangeError} When the duration is negative or uses calendar units.
 * @example
 * ```ts
 * const delay = toTemporalDuration({ minutes: 5 }, "delay");
 * delay.total("millisecond"); // 300000
 * ```
 * @since 0.2.0
 */
export function toTemporalDuration(
  duration: DurationInput,
  optionName = "duration",
): Temporal.Duration {
  // Validates (non-negative, no calendar units) with the same messages.
  durationToMilliseconds(duration, optionName);
  if (isTemporalDuration(duration)) return duration;
  // A native Duration where the runtime has Temporal: it is what adapters
  // written against the runtime's Temporal expect, and the polyfill's
  // methods accept it too.
  const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
  return (native ?? Temporal).Duration.from(duration as Temporal.DurationLike | string);
}

/**
 * Whether a value is a `Temporal.Duration`, native or from any copy of the
 * polyfill (both tag their instances `"Temporal.Duration"`).
 */
function isTemporalDuration(value: unknown): value is Temporal.Duration {
  return Object.prototype.toString.call(value) === "[object Temporal.Duration]";
}

/**
 * Converts milliseconds to a balanced `Temporal.Duration`.
 * @param milliseconds A non-negative number of milliseconds.
 * @returns The duration.
 * @since 0.1.0
 */
export function millisecondsToDuration(milliseconds: number): Temporal.Duration {
  return Temporal.Duration.from({ milliseconds: Math.round(milliseconds) }).round({
    largestUnit: "hour",
  });
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value !== "object") return String(value);
  const className = (value as { constructor?: { name?: string } }).constructor?.name;
  if (className == null || className === "Object") {
    try {
      return JSON.stringify(value).slice(0, 100);
    } catch {
      return "an object";
    }
  }
  return `a ${className}`;
}
