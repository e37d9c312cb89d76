// The clock seam: what core reads as "now" for time it stores (a debounce
// burst's start, a throttle period's end, a task's enqueue time).  In
// production it is `Date.now` itself; `@fedwork/testing/app` hands a
// federation its test clock under a registered symbol, so that the seam is
// no public option and costs production one function reference.

/**
 * The options key under which `@fedwork/testing/app` gives a federation
 * its clock (a function returning epoch milliseconds).  Internal.
 * @since 0.4.0
 */
export const CLOCK_SEAM: unique symbol = Symbol.for("fedwork.testing.clock") as never;

/**
 * A clock: epoch milliseconds.  Internal.
 * @since 0.4.0
 */
export type EpochClock = () => number;

/**
 * What a federation hands the clock seam's owner, so that recurring
 * schedules run as its clock moves.  Internal.
 * @since 0.4.0
 */
export interface ClockSeamDriver {
  /**
   * Enqueues the schedules' ticks due at `now`.
   * @param now Epoch milliseconds.
   * @returns When the earliest next tick is due, or `undefined`.
   */
  runSchedulesAt(now: number): Promise<number | undefined>;
}

/**
 * Hands `driver` to the clock under {@link CLOCK_SEAM}, when that clock
 * has an `attach()` method.  Internal.
 * @param options The federation's options.
 * @param driver What the clock's owner may call.
 * @since 0.4.0
 */
export function attachClockSeam(options: object, driver: ClockSeamDriver): void {
  const seam = (options as { readonly [CLOCK_SEAM]?: unknown })[CLOCK_SEAM];
  const attach = typeof seam === "function" ? (seam as { attach?: unknown }).attach : undefined;
  if (typeof attach === "function") attach.call(seam, driver);
}

/**
 * The clock a federation's options carry under {@link CLOCK_SEAM}, or
 * `Date.now`.  Internal.
 * @param options The federation's options.
 * @returns The clock.
 * @since 0.4.0
 */
export function clockOf(options: object): EpochClock {
  const seam = (options as { readonly [CLOCK_SEAM]?: unknown })[CLOCK_SEAM];
  return typeof seam === "function" ? seam as EpochClock : Date.now;
}
