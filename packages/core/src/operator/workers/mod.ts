/**
 * Worker presence: each `startQueue()` registers in the key–value store
 * and heartbeats; `listWorkers()` reads who runs what.
 * @module
 * @since 0.3.0
 */
export { listWorkers, type ResolvedWorkerPresenceOptions, WorkerPresence } from "./presence.ts";
export { resolveWorkerPresenceOptions } from "./options.ts";
export { queueConcurrency } from "./concurrency.ts";
export { groupWorkersByMachine } from "./machines.ts";
export { checkMachineId, MAX_MACHINE_ID_LENGTH } from "./machine-id.ts";
export { type FederationStartQueueOptions, startWorkers, type WorkerStartPort } from "./start.ts";
export type {
  WorkerCounts,
  WorkerEvent,
  WorkerInfo,
  WorkerMachine,
  WorkerPresenceOptions,
  WorkerQueueInfo,
  WorkerState,
} from "./types.ts";
export { DEFAULT_CLOSE_GRACE_MS, type FederationCloseOptions, WorkerShutdown } from "./shutdown.ts";
export {
  closeOnSignals,
  type CloseOnSignalsOptions,
  type ShutdownSignal,
  type SignalClosable,
  type SignalClosing,
} from "./close-on-signals.ts";
