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
