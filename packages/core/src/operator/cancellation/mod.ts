/**
 * Task cancellation: `cancelTask()` marks a queued task so that no worker
 * runs it, and aborts a running task's signal in whichever process runs
 * it, over the federation's pub/sub transport.
 * @module
 * @since 0.3.0
 */
export {
  TaskCanceller,
  type TaskCancelOperations,
  type TaskCancelOptions,
  type TaskCancelResult,
} from "./cancellation.ts";
