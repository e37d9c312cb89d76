/**
 * `@fedwork/testing`: conformance suites that every Fedwork
 * {@link https://jsr.io/@fedwork/core | MessageQueue} and `KvStore` backend
 * runs from its own test file, on Deno, Node.js and Bun.
 *
 * @example
 * ```ts ignore
 * import { testKvStore, testMessageQueue } from "@fedwork/testing";
 * ```
 * @module
 * @since 0.1.0
 */
export type {
  FederationConformanceOptions,
  KvStoreConformanceOptions,
  MessageQueueConformanceOptions,
  MessageQueueFactory,
} from "./types.ts";
export { testMessageQueue } from "./message-queue-suite.ts";
export {
  type PoisonTestOptions,
  type PoisonTestReport,
  type PoisonTestRun,
  runPoisonTest,
} from "./poison-test.ts";
export { testKvStore } from "./kv-store-suite.ts";
export { type DebounceConformanceOptions, testDebounceAndThrottle } from "./debounce-suite.ts";
export { type TaskLimitsConformanceOptions, testTaskLimits } from "./limits-suite.ts";
export { testFederationOverQueue } from "./federation-suite.ts";
export {
  type ProgressRoutingBackend,
  type ProgressRoutingConformanceOptions,
  testTaskProgressAndRouting,
} from "./progress-routing-suite.ts";
export {
  DEFAULT_EVENT_TIMEOUT_MS,
  type Deferred,
  deferred,
  delay,
  waitUntil,
  within,
} from "./wait.ts";
export { type RecordedRequest, startTestServer, type TestServer } from "./http-server.ts";
export { type QueueSoakOptions, type QueueSoakReport, runQueueSoak } from "./soak.ts";
export {
  type FailedDeliveryConformanceOptions,
  testFailedDeliveries,
} from "./failed-delivery-suite.ts";
export { testWebhooks, type WebhookConformanceOptions } from "./webhook-suite.ts";
export { testWorkerPresence, type WorkerPresenceConformanceOptions } from "./presence-suite.ts";
export { testWorkerMachines, type WorkerMachinesConformanceOptions } from "./machines-suite.ts";
export { type TaskRetentionConformanceOptions, testTaskRetention } from "./retention-suite.ts";
export {
  type GracefulShutdownConformanceOptions,
  type ShutdownBackend,
  testGracefulShutdown,
} from "./shutdown-suite.ts";
export { type PauseConformanceOptions, testPauseAndResume } from "./pause-suite.ts";
export {
  type BatchHandlerBackend,
  type BatchHandlerConformanceOptions,
  testBatchHandlers,
} from "./batch-handler-suite.ts";
export type { PauseBackend } from "./pause-app.ts";
export { type HostLimitsConformanceOptions, testHostLimits } from "./host-limits-suite.ts";

export { type DurableStepsConformanceOptions, testDurableSteps } from "./durable-steps-suite.ts";
export type { DurableStepsBackend } from "./durable-steps-app.ts";
