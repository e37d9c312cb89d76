// What happens to step records when a task ends: they are deleted (kept,
// for a failed task, until their TTL), and a child task of
// `ctx.step.invoke()` tells its parent how it ended.
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import type { MessageEvent } from "../../processing/events.ts";
import type { ObservedAttempt } from "../../processing/observed-attempt.ts";
import { encodeTaskPayload } from "../codec/mod.ts";
import type { TaskMessage } from "../message.ts";
import { taskResultOf } from "../result.ts";
import { CHILD_ENDED_EVENT, publishStepEvent, type WakeTask } from "./events.ts";
import { DEFAULT_STEP_EVENT_WINDOW_MS } from "./limits.ts";
import type { ChildEnding } from "./host.ts";
import { stepStateKey } from "./state.ts";

const logger = getLogger(["fedwork", "task", "steps"]);

const usedSteps = new WeakSet<object>();

/**
 * Marks a message whose run used steps, for their records to be deleted
 * when it ends.  Internal.
 * @param message The message.
 * @since 0.4.0
 */
export function markStepsUsed(message: TaskMessage): void {
  usedSteps.add(message);
}

/**
 * The dispatcher observer of step records: deletes a task's records when
 * it completes, is dropped or is cancelled, and wakes the parent of an
 * invoked child.  Cheap for tasks
 * without steps: two field checks.  Internal.
 * @param kv The store.
 * @param wake Puts a woken task's message into its queue.
 * @returns The observer.
 * @since 0.4.0
 */
export function createStepObserver(
  kv: KvStore,
  wake: WakeTask,
): (attempt: ObservedAttempt) => void | Promise<void> {
  return (attempt) => {
    const message = attempt.message;
    if (message.type !== "task" || attempt.outcome.type === "retrying") return;
    const task = message as TaskMessage;
    const hasSteps = task.steps != null || usedSteps.has(message);
    if (!hasSteps && task.invokedBy == null) return;
    return ended(kv, wake, attempt.event, task, hasSteps);
  };
}

async function ended(
  kv: KvStore,
  wake: WakeTask,
  event: MessageEvent,
  message: TaskMessage,
  hasSteps: boolean,
): Promise<void> {
  try {
    // A failed task keeps its records (until their TTL): retryFailedTask()
    // enqueues it again with its id, and it replays from the failed step.
    if (hasSteps && event.type !== "failed") await kv.delete(stepStateKey(message.id));
    if (message.invokedBy == null) return;
    const state = event.type === "unhandled" ? "completed" : event.type;
    if (
      state !== "completed" && state !== "failed" && state !== "dropped" && state !== "cancelled"
    ) return;
    const ending: ChildEnding = {
      state,
      ...(state === "completed" ? { result: taskResultOf(message)?.result } : {}),
      ...(state === "failed" || state === "dropped" ? { reason: reasonOf(event) } : {}),
    };
    await publishStepEvent(
      kv,
      wake,
      CHILD_ENDED_EVENT,
      message.id,
      await encodeTaskPayload(ending),
      DEFAULT_STEP_EVENT_WINDOW_MS,
    );
  } catch (error) {
    logger.error("Could not clean up the steps of task {taskId} after it ended: {error}", {
      taskId: message.id,
      error,
    });
  }
}

function reasonOf(event: MessageEvent): string | undefined {
  const error = (event as { readonly error?: unknown }).error;
  if (error instanceof Error) return error.message;
  const reason = (event as { readonly reason?: unknown }).reason;
  return typeof reason === "string" ? reason : undefined;
}
