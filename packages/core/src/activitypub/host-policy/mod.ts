/**
 * The host policy of deliveries and the inbox: blocked hosts, and the
 * waits a host's `Retry-After` asks for.
 * @module
 * @since 0.4.0
 */
export {
  type HostBlockPredicate,
  type HostPolicyOptions,
  type ResolvedHostPolicy,
  resolveHostPolicy,
} from "./options.ts";
export { hostNameOf, normalizeHostName } from "./host-name.ts";
export { retryAfterMilliseconds } from "./retry-after.ts";
export { HostWaits } from "./host-waits.ts";
export type {
  HostConcurrencyFunction,
  HostRate,
  HostRateFunction,
  ResolvedHostRate,
} from "./limits-options.ts";
