// A task's steps as operators see them (the dashboard, a CLI): what was
// recorded, and the step the task is at, read from its step records.
import type { KvStore } from "../../kv/kv-store.ts";
import type { StepKind } from "./state.ts";
import { loadStepState } from "./state.ts";

/**
 * One step of a task, as `federation.getTaskSteps()` tells it.
 * @since 0.4.0
 */
export interface TaskStepInfo {
  /** The step's id. */
  readonly id: string;
  /**
   * What the step does: `"run"`, `"sleep"`, `"wait"` (`waitForEvent`),
   * `"activity"` (`waitForActivity`) or `"invoke"`.
   */
  readonly kind: StepKind;
  /**
   * `"done"` (recorded), `"sleeping"`, `"waiting"` (for an event, an
   * activity or a child task), or `"retrying"` (a `run` step whose own
   * retry policy runs it again).
   */
  readonly state: "done" | "sleeping" | "waiting" | "retrying";
  /** When it was recorded, or when its sleep or wait began. */
  readonly at: Date;
  /** For a sleep or wait not done: when it ends at the latest. */
  readonly until?: Date;
  /** For a retrying `run` step: how many times it failed. */
  readonly failures?: number;
  /** For an `invoke`: the child task's id. */
  readonly childId?: string;
}

/**
 * Reads a task's steps, in the order its code runs them.
 * @param kv The store.
 * @param taskId The task's id.
 * @returns The steps; none for a task without steps or whose records were
 *          deleted (it ended).
 * @since 0.4.0
 */
export async function readTaskSteps(kv: KvStore, taskId: string): Promise<TaskStepInfo[]> {
  const { state } = await loadStepState(kv, taskId);
  const steps: TaskStepInfo[] = [];
  for (const record of state.steps) {
    if (record == null || typeof record.id !== "string") continue;
    const pending = record.kind === "sleep"
      ? "sleeping"
      : record.kind === "run"
      ? "retrying"
      : "waiting";
    steps.push({
      id: record.id,
      kind: record.kind,
      state: record.done ? "done" : pending,
      at: new Date(record.at),
      ...(!record.done && typeof record.until === "number"
        ? { until: new Date(record.until) }
        : {}),
      ...(!record.done && typeof record.failures === "number" ? { failures: record.failures } : {}),
      ...(typeof record.child === "string" ? { childId: record.child } : {}),
    });
  }
  return steps;
}
