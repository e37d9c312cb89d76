import { PermanentError } from "../../processing/errors.ts";

/**
 * What went wrong with a step: a duplicate id in one run, recorded steps
 * that no longer match the code (a step renamed or moved after a deploy),
 * a result that cannot be recorded, too many steps, or an invalid
 * argument.
 * @since 0.4.0
 */
export type TaskStepProblem = "duplicate" | "mismatch" | "unrecordable" | "too-many" | "invalid";

/**
 * Thrown by `ctx.step` when a step cannot be run as asked.  A permanent
 * error: the task fails without a retry, since running it again would go
 * wrong the same way.  The message names the task and the step.
 * @since 0.4.0
 */
export class TaskStepError extends PermanentError {
  /** The task's name. */
  readonly taskName: string;
  /** The step's id, as the code gave it. */
  readonly stepId: string;
  /** What went wrong. */
  readonly problem: TaskStepProblem;

  /**
   * @param taskName The task's name.
   * @param stepId The step's id.
   * @param problem What went wrong.
   * @param message What went wrong and how to fix it.
   * @param options `cause`: the underlying error.
   */
  constructor(
    taskName: string,
    stepId: string,
    problem: TaskStepProblem,
    message: string,
    options?: { readonly cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TaskStepError";
    this.taskName = taskName;
    this.stepId = stepId;
    this.problem = problem;
  }
}

/**
 * Thrown by `ctx.step.invoke()` when the child task did not complete: it
 * failed, was dropped or was cancelled.  A permanent error for the parent
 * unless its handler catches it.
 * @since 0.4.0
 */
export class TaskStepInvokeError extends PermanentError {
  /** The child task's id. */
  readonly childId: string;
  /** How the child ended. */
  readonly state: "failed" | "dropped" | "cancelled";

  /**
   * @param stepId The step's id.
   * @param childId The child task's id.
   * @param state How the child ended.
   * @param reason The child's error message or reason, if any.
   */
  constructor(
    stepId: string,
    childId: string,
    state: "failed" | "dropped" | "cancelled",
    reason: string | undefined,
  ) {
    super(
      `The child task ${childId} of the step ${JSON.stringify(stepId)} ended ${state}` +
        (reason == null ? "." : `: ${reason}`),
    );
    this.name = "TaskStepInvokeError";
    this.childId = childId;
    this.state = state;
  }
}
