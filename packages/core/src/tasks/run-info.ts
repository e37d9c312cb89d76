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
   * Aborted when the worker shuts down: a long handler should stop soon
   * after and throw (the task is then retried) or return.
   */
  readonly signal: AbortSignal;
  /**
   * For a run of a recurring task (`scheduleTask()`): the schedule's id and
   * the tick the run is for, which may be a little earlier than
   * `enqueuedAt`.  Absent for tasks enqueued otherwise.
   * @since 0.2.0
   */
  readonly schedule?: { readonly id: string; readonly tick: Date };
}
