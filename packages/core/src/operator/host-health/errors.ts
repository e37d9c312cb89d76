import { markRemoteFailureClass } from "../../processing/remote-failure.ts";

/**
 * Thrown (as the cause of a `PermanentError`) for a delivery to a host that
 * host health declared dead, and by `retryFailedTask()` for a failed
 * delivery to such a host: it stopped answering for longer than
 * `hostHealth.maxProbeAttempts` probes or `hostHealth.maxUnhealthyDuration`.
 * Release the host with `federation.releaseHost()` (or the dashboard's
 * Release button) once it is back.
 * @since 0.3.0
 */
export class DeadHostError extends Error {
  /** The host, e.g. `mastodon.example`. */
  readonly host: string;

  /**
   * @param host The host.
   * @param since When it was declared dead.
   */
  constructor(host: string, since: Date) {
    super(
      `The host ${host} was declared dead at ${since.toISOString()} after it stopped ` +
        "answering; deliveries to it fail until it is released with " +
        `federation.releaseHost(${JSON.stringify(host)}) or the dashboard's Release button.`,
    );
    this.name = "DeadHostError";
    this.host = host;
  }
}

// A remote party's doing, not a bug here: logged without a stack.
markRemoteFailureClass(DeadHostError);
