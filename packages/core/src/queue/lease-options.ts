// The listener options every lease-based queue shares, checked with the
// option checks of options/: one wording, and the option's name in every
// message.
import {
  nonNegativeIntegerOption,
  positiveDurationOption,
  positiveIntegerOption,
} from "../options/value-options.ts";
import type { DurationInput } from "../time/duration.ts";

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
  /**
   * How far the prefetch may grow while quick handlers drain a backlog
   * (see `LeaseListenerOptions.maxPrefetch`); at least `prefetch`.
   * @since 0.3.0
   */
  readonly maxPrefetch?: number;
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
  /**
   * The backend's documented default `maxPrefetch`, used when it exceeds
   * the resolved `prefetch`; `prefetch` (no growth) when omitted.
   * @since 0.3.0
   */
  readonly maxPrefetch?: number;
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
  /** At least `prefetch`. @since 0.3.0 */
  readonly maxPrefetch: number;
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
  const maxPrefetch = nonNegativeIntegerOption(
    input.maxPrefetch,
    "maxPrefetch",
    Math.max(prefetch, defaults.maxPrefetch ?? prefetch),
  );
  if (maxPrefetch < prefetch) {
    throw new RangeError(
      `The maxPrefetch option (${maxPrefetch}) must be at least the prefetch option ` +
        `(${prefetch}); set it equal to prefetch to keep the prefetch fixed.`,
    );
  }
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
  return { concurrency, prefetch, maxPrefetch, leaseMs, pollMs, heartbeatMs };
}
