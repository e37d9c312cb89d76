import {
  DEFAULT_DELIVERY_TIMEOUT_MS,
  type RemoteRequestLimits,
  type ResolvedRemoteRequestLimits,
  resolveRemoteRequestLimits,
} from "./outgoing-http.ts";
import { positiveDurationOption } from "../../options/value-options.ts";
import type { DurationInput } from "../../time/duration.ts";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { assertKnownOptions } from "../../options/known-options.ts";

/**
 * The `remoteRequests` option of a federation: the limits every request it
 * makes to another server keeps (documents, keys, WebFinger, NodeInfo,
 * deliveries, webhooks, host probes).  See the manual's security page.
 * @since 0.3.0
 */
export interface FederationRemoteRequestOptions extends RemoteRequestLimits {
  /**
   * The time limit of one delivery POST (redirects and the answer
   * included); past it the delivery is aborted and retried by the outbox
   * retry policy.
   * @default 15 seconds
   */
  readonly deliveryTimeout?: DurationInput;
}

/**
 * {@link FederationRemoteRequestOptions}, checked, in milliseconds.
 * @since 0.3.0
 */
export interface ResolvedRemoteRequestOptions extends ResolvedRemoteRequestLimits {
  readonly deliveryTimeoutMs: number;
}

const NAMES: Record<keyof FederationRemoteRequestOptions, true> = {
  timeout: true,
  maxBodyBytes: true,
  maxRedirects: true,
  deliveryTimeout: true,
};

/**
 * Checks the `remoteRequests` option and fills in its defaults.
 * @param options The option's value.
 * @returns The resolved limits.
 * @throws {FederationOptionError} When a limit is invalid; the message
 *         names it (e.g. `remoteRequests.timeout`).
 * @since 0.3.0
 */
export function resolveRemoteRequestOptions(
  options: FederationRemoteRequestOptions | undefined,
): ResolvedRemoteRequestOptions {
  if (options == null) return resolveRemoteRequestOptions({});
  if (typeof options !== "object") {
    throw new FederationOptionError(
      "remoteRequests",
      "The remoteRequests option must be an object such as { timeout: { seconds: 10 } }.",
    );
  }
  assertKnownOptions(options, Object.keys(NAMES), { prefix: "remoteRequests." });
  let limits: ResolvedRemoteRequestLimits;
  try {
    limits = resolveRemoteRequestLimits(options, {}, "remoteRequests.");
  } catch (error) {
    const name = /The (remoteRequests\.\w+) option/.exec((error as Error).message)?.[1];
    throw new FederationOptionError(name ?? "remoteRequests", (error as Error).message);
  }
  let deliveryTimeoutMs: number;
  try {
    deliveryTimeoutMs = positiveDurationOption(
      options.deliveryTimeout ?? undefined,
      "remoteRequests.deliveryTimeout",
      DEFAULT_DELIVERY_TIMEOUT_MS,
    );
  } catch (error) {
    throw new FederationOptionError("remoteRequests.deliveryTimeout", (error as Error).message);
  }
  return { ...limits, deliveryTimeoutMs };
}
