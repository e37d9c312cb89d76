/**
 * What the federation knows about delivering to one remote host.
 * @since 0.2.0
 */
export interface HostHealth {
  /** The host, with its port when not the default, e.g. `mastodon.example`. */
  readonly host: string;
  /**
   * `false` while deliveries to it are parked and it is being probed, and
   * while it is dead.
   */
  readonly healthy: boolean;
  /**
   * `true` once it failed `maxProbeAttempts` probes or stayed unhealthy
   * for `maxUnhealthyDuration`: deliveries to it fail for good at once
   * (into the failed-task store) until it is released.
   * @since 0.3.0
   */
  readonly dead: boolean;
  /** Probes that failed since it turned unhealthy (since 0.3.0). */
  readonly failedProbes: number;
  /**
   * Deliveries that failed in a row (network errors, 5xx, 408, 429) since
   * the last one that succeeded.
   */
  readonly consecutiveFailures: number;
  /** Since when it has been in its current state (dead: since when dead). */
  readonly since: Date;
  /** When it is probed next, while unhealthy. */
  readonly nextProbeAt?: Date;
  /** How many deliveries are parked, waiting for it to recover. */
  readonly parkedDeliveries: number;
}

/**
 * A host turned unhealthy or healthy again, as `hostHealth.onChange` gets
 * it.
 * @since 0.2.0
 */
export interface HostHealthChange {
  /** The host. */
  readonly host: string;
  /** The new state. */
  readonly healthy: boolean;
  /**
   * `true` when the host was declared dead (its parked deliveries fail
   * for good); since 0.3.0.
   */
  readonly dead?: boolean;
  /** When it changed. */
  readonly at: Date;
  /**
   * The failures in a row that made it unhealthy; `0` when it recovered.
   */
  readonly consecutiveFailures: number;
  /** The delivery failure that tipped it, when it turned unhealthy. */
  readonly error?: unknown;
}
