/**
 * Remote-server health for delivery: counting failed deliveries per host
 * (the records), parking deliveries to unhealthy hosts, probing them with a
 * built-in task and releasing what was parked, or giving up on a dead host.
 * @module
 * @since 0.2.0
 */
export { FederationHostHealth, HOST_PROBE_TASK_NAME } from "./host-health.ts";
export type { HostHealthOperations, HostHealthPort, ResolvedHostHealthOptions } from "./api.ts";
export type { HostHealth, HostHealthChange } from "./types.ts";
export { DeadHostError } from "./errors.ts";
