import { Temporal } from "@js-temporal/polyfill";

/**
 * A length of time as Fedwork's options accept it: a `Temporal.Duration`
 * (native or from `@js-temporal/polyfill`) or a duration-like object such as
 * `{ seconds: 30 }`.
 * @since 0.1.0
 */
export type DurationInput = Temporal.Duration | Temporal.DurationLike;

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
      `The ${optionName} option must be a Temporal.Duration or a duration-like object ` +
        `such as { seconds: 30 }; got ${describeValue(duration)}.`,
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
