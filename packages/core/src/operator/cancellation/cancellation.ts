import { getLogger } from "@logtape/logtape";
import { assertKnownOptions } from "../../options/known-options.ts";
import { cancellationMarkerTtl, type TaskCancellations } from "./markers.ts";
import { isTerminalTaskState, type TaskState } from "../status/store.ts";
import type { TaskStatusTracker } from "../status/mod.ts";

const logger = getLogger(["fedwork", "task"]);

/** The longest reason kept (and sent to the running task). */
const MAX_REASON_LENGTH = 1000;

/**
 * Options for `Federation.cancelTask()`.
 * @since 0.3.0
 */
export interface TaskCancelOptions {
  /**
   * Why, in words: kept in the task's status record (`status.reason`),
   * given to the handler as the `reason` of the `TaskCancelledError` its
   * signal aborts with, and carried by the `cancelled` event and webhook.
   * At most 1,000 characters.  None by default.
   */
  readonly reason?: string;
}

/**
 * What `Federation.cancelTask()` did:
 * - `"cancelled"`: the task had not ended (`state` says where it was: a
 *   `queued` or `retrying` task is now `cancelled` and no worker will run
 *   it; a `running` one had its signal aborted, and becomes `cancelled`
 *   when its handler returns);
 * - `"finished"`: the task had already ended (`state` says how); nothing
 *   was done;
 * - `"unknown"`: there is no status record of this id (never enqueued
 *   here, or its record expired); nothing was done.
 * @since 0.3.0
 */
export type TaskCancelResult =
  | {
    /** The task is cancelled. */
    readonly status: "cancelled";
    /** The task's id. */
    readonly id: string;
    /** Where the task was when it was cancelled. */
    readonly state: "queued" | "running" | "retrying";
  }
  | {
    /** The task had ended already: nothing done. */
    readonly status: "finished";
    /** The task's id. */
    readonly id: string;
    /** How it ended. */
    readonly state: "completed" | "failed" | "dropped" | "cancelled";
  }
  | {
    /** No task of this id is known: nothing done. */
    readonly status: "unknown";
    /** The id asked for. */
    readonly id: string;
  };

/**
 * Task cancellation for the federation.  `Federation` has this method.
 * @since 0.3.0
 */
export interface TaskCancelOperations {
  /**
   * Cancels a task: a queued (or delayed, or retrying) task is marked so
   * that no worker runs it (the worker that takes it acknowledges it
   * without running it); a running task's `ctx.task.signal` aborts, with a
   * `TaskCancelledError`, in whichever process runs it (over the
   * federation's `pubsub`), and it ends as `cancelled` however its handler
   * ends, without a retry.  The status record says `cancelled` at once for
   * a task not running, and when its handler returns for a running one;
   * the `cancelled` event (and webhook) comes from the worker that takes
   * the task off its queue or ran it.  Cancelling a task that has ended,
   * or one without a status record, does nothing and says so: status
   * records must be kept (`taskStatusRetention` is not 0).
   * @param id The task's id (`enqueueTask()`'s `messageId`).
   * @param options The reason.
   * @returns What was done.
   * @throws {TypeError} When `id` is not a non-empty string or `reason` is
   *         not a string of at most 1,000 characters.
   * @throws {UnknownOptionError} When `options` holds an unknown name.
   * @example
   * ```ts ignore
   * const result = await federation.cancelTask(id, { reason: "import abandoned" });
   * if (result.status === "finished") console.log(`already ${result.state}`);
   * ```
   * @since 0.3.0
   */
  cancelTask(id: string, options?: TaskCancelOptions): Promise<TaskCancelResult>;
}

/**
 * Implements {@link TaskCancelOperations} over the status records and the
 * cancellation markers.  Internal.
 * @since 0.3.0
 */
export class TaskCanceller implements TaskCancelOperations {
  readonly #status: TaskStatusTracker;
  readonly #cancellations: TaskCancellations;

  /**
   * @param status The status records.
   * @param cancellations The markers and requests.
   */
  constructor(status: TaskStatusTracker, cancellations: TaskCancellations) {
    this.#status = status;
    this.#cancellations = cancellations;
  }

  async cancelTask(id: string, options: TaskCancelOptions = {}): Promise<TaskCancelResult> {
    if (typeof id !== "string" || id === "") {
      throw new TypeError("cancelTask() needs a task id (a non-empty string).");
    }
    assertKnownOptions(options, ["reason"], { where: "cancelTask()" });
    const reason: unknown = options.reason;
    if (reason != null && (typeof reason !== "string" || reason.length > MAX_REASON_LENGTH)) {
      throw new TypeError(
        `The reason option of cancelTask() must be a string of at most ${MAX_REASON_LENGTH} ` +
          `characters; got ${
            typeof reason === "string" ? `${reason.length} characters` : typeof reason
          }.`,
      );
    }
    const current = await this.#status.getTaskStatus(id);
    if (current == null) return { status: "unknown", id };
    if (isTerminalTaskState(current.state)) {
      return { status: "finished", id, state: current.state as FinishedState };
    }
    await this.#cancellations.request(
      id,
      reason ?? undefined,
      cancellationMarkerTtl(this.#status.retentionMs),
    );
    // A running task's record changes when its handler returns.  A record
    // that says `queued` may be a few milliseconds behind a task that just
    // started (see getTaskStatus()): the request above reached it too.
    if (current.state !== "running") await this.#status.cancelled(current, reason ?? undefined);
    logger.info("Cancelled task {messageId} ({taskName}), which was {state}.", {
      messageId: id,
      taskName: current.name,
      state: current.state,
      reason,
    });
    return { status: "cancelled", id, state: current.state as PendingState };
  }
}

type FinishedState = Extract<TaskState, "completed" | "failed" | "dropped" | "cancelled">;
type PendingState = Extract<TaskState, "queued" | "running" | "retrying">;
