import { Cron } from "croner";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";

/**
 * When a recurring task runs: every fixed interval, counted from when it
 * was scheduled, or on a cron pattern (croner's syntax: five fields, or six
 * with seconds first), optionally in an IANA time zone (UTC by default).
 * @since 0.2.0
 */
export type TaskScheduleTiming =
  | {
    /** The interval between runs; at least one millisecond. */
    readonly every: DurationInput;
    readonly cron?: never;
    readonly timezone?: never;
  }
  | {
    /** A cron pattern, e.g. `"0 3 * * *"` (03:00 every day). */
    readonly cron: string;
    /** The IANA time zone the pattern is read in, e.g. `"Europe/Paris"`. */
    readonly timezone?: string;
    readonly every?: never;
  };

/**
 * A timing as stored: plain JSON.
 * @since 0.2.0
 */
export type StoredTiming =
  | { readonly everyMs: number }
  | { readonly cron: string; readonly timezone?: string };

/**
 * Checks a timing and turns it into its stored form.
 * @param timing What the caller gave.
 * @returns The stored form.
 * @throws {TypeError} When neither or both of `every` and `cron` are given,
 *         or the pattern or time zone is invalid.
 * @throws {RangeError} When `every` is not positive.
 * @since 0.2.0
 */
export function resolveTiming(timing: TaskScheduleTiming): StoredTiming {
  if (timing == null || typeof timing !== "object") {
    throw new TypeError("The schedule options must be an object with every or cron.");
  }
  const { every, cron, timezone } = timing as {
    every?: DurationInput;
    cron?: unknown;
    timezone?: unknown;
  };
  if ((every == null) === (cron == null)) {
    throw new TypeError(
      "The schedule options need exactly one of every (a duration) and cron (a pattern).",
    );
  }
  if (every != null) {
    if (timezone != null) {
      throw new TypeError("The timezone option applies to cron schedules only.");
    }
    const everyMs = durationToMilliseconds(every, "every");
    if (everyMs < 1) throw new RangeError("The every option must be at least one millisecond.");
    return { everyMs };
  }
  if (typeof cron !== "string") {
    throw new TypeError(`The cron option must be a string; got ${typeof cron}.`);
  }
  if (timezone != null && typeof timezone !== "string") {
    throw new TypeError(
      `The timezone option must be an IANA time zone name; got ${typeof timezone}.`,
    );
  }
  const stored = timezone == null ? { cron } : { cron, timezone };
  try {
    // Compute one run: this also checks the time zone.
    cronOf(stored).nextRun(new Date());
  } catch (error) {
    throw new TypeError(
      `The cron schedule ${JSON.stringify(cron)}${
        timezone == null ? "" : ` in ${JSON.stringify(timezone)}`
      } is invalid: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return stored;
}

// Parsed patterns, reused: schedules are read again every refresh.
const crons = new Map<string, Cron>();

function cronOf(timing: { readonly cron: string; readonly timezone?: string }): Cron {
  const key = JSON.stringify([timing.cron, timing.timezone ?? null]);
  let cron = crons.get(key);
  if (cron == null) {
    // Without a function croner only computes; it never starts a timer.
    cron = new Cron(timing.cron, { timezone: timing.timezone ?? "Etc/UTC" });
    if (crons.size > 1000) crons.clear();
    crons.set(key, cron);
  }
  return cron;
}

/**
 * The latest tick at or before `now`, or `undefined` when there is none
 * after `anchor` (interval ticks are `anchor + n × every` for n ≥ 1).
 * @param timing The timing.
 * @param anchor When the schedule was created, in epoch milliseconds.
 * @param now The moment, in epoch milliseconds.
 * @returns The tick, in epoch milliseconds.
 * @since 0.2.0
 */
export function latestTick(timing: StoredTiming, anchor: number, now: number): number | undefined {
  if ("everyMs" in timing) {
    const n = Math.floor((now - anchor) / timing.everyMs);
    return n >= 1 ? anchor + n * timing.everyMs : undefined;
  }
  const [previous] = cronOf(timing).previousRuns(1, new Date(now + 1));
  return previous == null || previous.getTime() <= anchor ? undefined : previous.getTime();
}

/**
 * The first tick strictly after `after`.
 * @param timing The timing.
 * @param anchor When the schedule was created, in epoch milliseconds.
 * @param after The moment, in epoch milliseconds.
 * @returns The tick, in epoch milliseconds, or `undefined` when a cron
 *          pattern has no future run.
 * @since 0.2.0
 */
export function nextTick(timing: StoredTiming, anchor: number, after: number): number | undefined {
  if ("everyMs" in timing) {
    const n = Math.max(0, Math.floor((after - anchor) / timing.everyMs)) + 1;
    return anchor + n * timing.everyMs;
  }
  return cronOf(timing).nextRun(new Date(Math.max(after, anchor)))?.getTime();
}
