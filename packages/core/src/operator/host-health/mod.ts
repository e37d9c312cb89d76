/**
 * Remote-server health as the federation runs it: counting failed
 * deliveries per host, parking deliveries to unhealthy hosts, probing them
 * with a built-in task and releasing what was parked.  The records, the
 * probe and the health types live in activitypub/health/.
 * @module
 * @since 0.2.0
 */
export { FederationHostHealth, HOST_PROBE_TASK_NAME } from "./host-health.ts";
export type { HostHealthOperations, HostHealthPort, ResolvedHostHealthOptions } from "./api.ts";
