/**
 * Thrown by `TaskContext.addToBatch()` (and by `enqueueBatch()` run again
 * for a batch that already completed) when members can no longer be added:
 * every member is done, or the adding member is itself already done.
 * @since 0.3.0
 */
export class BatchSealedError extends Error {
  /** The batch's id. */
  readonly batchId: string;

  /**
   * @param batchId The batch.
   * @param why Why it is sealed, in words.
   */
  constructor(batchId: string, why: string) {
    super(`Members cannot be added to batch ${batchId}: ${why}.`);
    this.name = "BatchSealedError";
    this.batchId = batchId;
  }
}
