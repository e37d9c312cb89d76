// The port through which a task run learns of its cancellation: the task
// handler asks for a watch before each run; operator/cancellation/ keeps
// the markers and requests behind it.

/**
 * One run of a task, watched for its cancellation: what the task handler
 * needs of cancellations (operator/cancellation/markers.ts provides it).
 * Internal.
 * @since 0.3.0
 */
export interface TaskCancelWatch {
  /**
   * The run's signal: aborts when the worker's does, or (with a
   * `TaskCancelledError`) when the task is cancelled.
   */
  readonly signal: AbortSignal;
  /** Whether the task was cancelled (not merely its worker stopping). */
  readonly cancelled: boolean;
  /** The reason given to `cancelTask()`, if any. */
  readonly reason: string | undefined;
  /**
   * Settles once the run's cancellation marker has been read (never
   * rejects): from then on, `cancelled` says whether the task was cancelled
   * before this run began.  The read is under way while the run decodes
   * and validates its payload; the handler must not start before this
   * settles.  `undefined` when the marker was read at once (a
   * `MemoryKvStore`), or needs no reading (no cancellation was requested
   * in the federation): there is nothing to wait for.
   */
  readonly checked: Promise<void> | undefined;
  /** Stops watching: the run ended. */
  end(): void;
}
