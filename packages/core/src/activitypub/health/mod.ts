/**
 * Remote-server health for delivery: the records, parked deliveries and
 * the probe.
 * @module
 * @since 0.2.0
 */
export type { HostHealth, HostHealthChange } from "./types.ts";
export { DeadHostError } from "./errors.ts";
