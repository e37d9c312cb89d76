import { Temporal } from "@js-temporal/polyfill";
import { fractionalUnitMilliseconds } from "./fractional-units.ts";

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
 * depends on a reference date; days count as 24 hours.  Fractional units
 * (`{ seconds: 1.5 }`), which `Temporal.Duration.from()` refuses, are
 * accepted (since 0.4.0).
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
  if (typeof duration === "object" && duration !== null) {
    const known = knownDurations.get(duration);
    if (known !== undefined) return known;
  }
  const fast = simpleMilliseconds(duration);
  if (fast !== undefined) {
    // Temporal.Duration objects are immutable, so their value can be kept;
    // the TTLs and delays reused on every write hit this.
    if (isTemporalDuration(duration)) knownDurations.set(duration, fast);
    return fast;
  }
  const fractional = fractionalUnitMilliseconds(duration);
  if (fractional !== undefined) {
    if (fractional < 0) {
      throw new RangeError(
        `The ${optionName} option must not be negative; got ${describeValue(duration)}.`,
      );
    }
    return fractional;
  }
  let parsed: Temporal.Duration;
  try {
    // Temporal.Duration.from() accepts both native and polyfilled Duration
    // objects and plain duration-like property bags.
    parsed = Temporal.Duration.from(duration as Temporal.DurationLike);
  } catch (error) {
    if (usesCalendarUnit(duration)) {
      // e.g. { weeks: 1.5 }: say what is wrong with it, not that it is no duration.
      throw new RangeError(
        `The ${optionName} option must not use years, months or weeks (their length ` +
          `depends on a date); got ${describeValue(duration)}.`,
        { cause: error },
      );
    }
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
  const milliseconds = durationToMilliseconds(duration, optionName);
  if (isTemporalDuration(duration)) return duration;
  // A native Duration where the runtime has Temporal: it is what adapters
  // written against the runtime's Temporal expect, and the polyfill's
  // methods accept it too.
  const native = (globalThis as unknown as { Temporal?: typeof Temporal }).Temporal;
  // Temporal refuses fractional units, so those become whole milliseconds.
  const like = fractionalUnitMilliseconds(duration) === undefined
    ? duration as Temporal.DurationLike | string
    : { milliseconds };
  return (native ?? Temporal).Duration.from(like);
}

const SIMPLE_UNITS: readonly (readonly [string, number])[] = [
  ["days", 86_400_000],
  ["hours", 3_600_000],
  ["minutes", 60_000],
  ["seconds", 1_000],
  ["milliseconds", 1],
];
const SIMPLE_KEYS = new Set(SIMPLE_UNITS.map(([unit]) => unit));

/** Milliseconds of `Temporal.Duration` objects already converted. */
const knownDurations = new WeakMap<object, number>();

/**
 * The milliseconds of a duration made of whole, non-negative days, hours,
 * minutes, seconds and milliseconds (a `Temporal.Duration` or a plain
 * object), computed without Temporal arithmetic, which the polyfill makes
 * slow (a TTL is converted on every key–value write).  `undefined` for
 * anything else, which the general path handles (and rejects with the
 * right message).
 */
function simpleMilliseconds(duration: unknown): number | undefined {
  if (duration == null || typeof duration !== "object") return undefined;
  const fields = duration as Record<string, unknown>;
  const temporal = isTemporalDuration(duration);
  if (temporal) {
    if (
      fields.years !== 0 || fields.months !== 0 || fields.weeks !== 0 ||
      fields.microseconds !== 0 || fields.nanoseconds !== 0
    ) {
      return undefined;
    }
  } else {
    if (Object.getPrototypeOf(duration) !== Object.prototype) return undefined;
    let keys = 0;
    for (const key in fields) {
      if (!SIMPLE_KEYS.has(key)) return undefined;
      keys++;
    }
    // Temporal rejects an object without any unit.
    if (keys === 0) return undefined;
  }
  let total = 0;
  // Indexed, without destructuring: this runs for every key–value write
  // with a TTL, and each iteration's pair would be garbage.
  for (let i = 0; i < SIMPLE_UNITS.length; i++) {
    const unit = SIMPLE_UNITS[i][0];
    const factor = SIMPLE_UNITS[i][1];
    const value = fields[unit];
    if (value === undefined && !temporal) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) return undefined;
    total += value * factor;
  }
  return Number.isSafeInteger(total) ? total : undefined;
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

/** Whether a plain duration-like object names years, months or weeks. */
function usesCalendarUnit(value: unknown): boolean {
  if (value == null || typeof value !== "object" || isTemporalDuration(value)) return false;
  const fields = value as Record<string, unknown>;
  return ["years", "months", "weeks"].some((unit) => fields[unit] !== undefined);
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
