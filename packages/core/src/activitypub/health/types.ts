/**
 * What the federation knows about delivering to one remote host.
 * @since 0.2.0
 */
export interface HostHealth {
  /** The host, with its port when not the default, e.g. `mastodon.example`. */
  readonly host: string;
  /** `false` while deliveries to it are parked and it is being probed. */
  readonly healthy: boolean;
  /**
   * Deliveries that failed in a row (network errors, 5xx, 408, 429) since
   * the last one that succeeded.
   */
  readonly consecutiveFailures: number;
  /** Since when it has been in its current state. */
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
  /** When it changed. */
  readonly at: Date;
  /**
   * The failures in a row that made it unhealthy; `0` when it recovered.
   */
  readonly consecutiveFailures: number;
  /** The delivery failure that tipped it, when it turned unhealthy. */
  readonly error?: unknown;
}
