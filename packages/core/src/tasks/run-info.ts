import type { TaskProgressInput } from "./progress.ts";

/**
 * What a task handler knows about the run it is in, as `ctx.task`.
 * @since 0.2.0
 */
export interface TaskRunInfo {
  /** The task's name. */
  readonly name: string;
  /** The message's id: the same for every attempt of one enqueued task. */
  readonly id: string;
  /** The attempt number: 0 for the first run, 1 for the first retry… */
  readonly attempt: number;
  /** When the task was enqueued (its first attempt). */
  readonly enqueuedAt: Date;
  /**
   * Aborted when the worker shuts down, or (since 0.3.0) when the attempt's
   * time limit passes (the task's `timeout`, else the federation's
   * `taskTimeout`), then with a `HandlerTimeoutError` as its reason.  A
   * long handler should pass it on to what it awaits, or check it between
   * steps, and throw soon after it aborts: the attempt is then retried.  A
   * handler still running after the federation's `timeoutGracePeriod` is
   * abandoned: the worker moves on and leaves it running.  Also aborted
   * (since 0.3.0) when `cancelTask()` cancels the task, in whichever
   * process runs it, with a `TaskCancelledError` as its reason; the task
   * then ends as `cancelled` however the handler ends.
   */
  readonly signal: AbortSignal;
  /**
   * For a run of a recurring task (`scheduleTask()`): the schedule's id and
   * the tick the run is for, which may be a little earlier than
   * `enqueuedAt`.  Absent for tasks enqueued otherwise.
   * @since 0.2.0
   */
  readonly schedule?: { readonly id: string; readonly tick: Date };
  /**
   * For a member of a batch (`enqueueBatch()`): the batch's id, to which
   * `ctx.addToBatch()` adds.  Absent for other tasks.
   * @since 0.3.0
   */
  readonly batchId?: string;
  /**
   * Reports how far the task is: a percentage from 0 to 100, or
   * `{ percent?, data? }` with small JSON-compatible data (at most
   * `MAX_TASK_PROGRESS_DATA_BYTES`, 4096 bytes as JSON).  The progress is
   * kept with the task's status (`federation.getTaskStatus()`) and sent to
   * whoever watches the task (`federation.watchTask()`), in any process
   * sharing the federation's `pubsub`.  Resolves once stored and published.
   * @param progress The percentage, or the percent and data.
   * @throws {TaskProgressError} When the progress is malformed; nothing is
   *         reported then.
   * @example
   * ```ts
   * await ctx.task.reportProgress(40);
   * await ctx.task.reportProgress({ percent: 80, data: { step: "resize" } });
   * ```
   * @since 0.2.0
   */
  reportProgress(progress: TaskProgressInput): Promise<void>;
}
