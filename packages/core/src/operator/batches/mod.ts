// Task batches: enqueueBatch(), addToBatch(), their completion task and
// their progress.
export {
  BATCH_UPDATES_TOPIC,
  type BatchEnqueueOrigin,
  FederationBatches,
  type FederationBatchesOptions,
} from "./batches.ts";
export { BatchSealedError } from "./errors.ts";
export { batchKvKey } from "./record.ts";
export type {
  BatchCompletion,
  BatchEnqueueResult,
  BatchMember,
  BatchState,
  BatchStatus,
  BatchStatusOperations,
  EnqueueBatchOptions,
  WatchBatchOptions,
} from "./types.ts";
