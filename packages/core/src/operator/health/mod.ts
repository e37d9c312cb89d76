/**
 * Health and readiness: `checkHealth()` probes every engine and the
 * workers within a time limit; `createHealthHandler()` serves the report as
 * liveness and readiness endpoints, refused to the public.
 * @module
 * @since 0.4.0
 */
export { HealthChecker, type HealthPort, type HealthQueue } from "./check.ts";
export { isLoopbackAddress } from "./access.ts";
export { createHealthHandler, type HealthHandler, type HealthRequestInfo } from "./handler.ts";
export type {
  EngineHealth,
  HealthCheckOptions,
  HealthCheckStatus,
  HealthHandlerOptions,
  HealthOperations,
  HealthReport,
  WorkersHealth,
} from "./types.ts";
