/**
 * Durable steps in task handlers (`ctx.step`): memoized `run`, durable
 * `sleep`, `waitForEvent` with `sendEvent()`, and `invoke` of child tasks.
 * @module
 */
export { ACTIVITY_EVENT, activityTypeIdOf, publishStepActivity } from "./activities.ts";
export { ACTIVITY_WAITS_MAX_AGE_MS, ActivityWaitRegistry } from "./activity-waits.ts";
export { TaskStepError, TaskStepInvokeError, type TaskStepProblem } from "./errors.ts";
export {
  checkEventAddress,
  CHILD_ENDED_EVENT,
  publishStepEvent,
  sendStepEvent,
  type WakeTask,
} from "./events.ts";
export {
  DEFAULT_STEP_EVENT_WINDOW_MS,
  MAX_STEP_RECORD_BYTES,
  MAX_STEP_WAIT_MS,
  MAX_TASK_STEPS,
} from "./limits.ts";
export { createStepObserver, markStepsUsed } from "./lifecycle.ts";
export type { ChildEnding, StepNotice, StepRunnerHost } from "./host.ts";
export { StepRunner } from "./runner.ts";
export { loadStepState, type StepRecord, type StepState, stepStateKey } from "./state.ts";
export { readTaskSteps, type TaskStepInfo } from "./view.ts";
export {
  MAX_STATUS_STEP_IDS,
  readTaskStepsStatus,
  rememberedStepsStatus,
  rememberStepsStatus,
  stepsStatusOf,
} from "./status.ts";
export type {
  ActivityMatchTarget,
  ActivityType,
  SendEventOptions,
  SendEventResult,
  StepRunOptions,
  TaskSteps,
  TaskStepsStatus,
  WaitForActivityOptions,
  WaitForEventOptions,
} from "./types.ts";

import type { TaskMessage } from "../message.ts";
import type { TaskRunInfo } from "../run-info.ts";
import type { StepRunnerHost } from "./host.ts";
import { StepRunner as Runner } from "./runner.ts";

const runners = new WeakMap<TaskRunInfo, Runner>();

/**
 * Ties a run's step runner to its run information, for the context.
 * Internal.
 * @param info The run information.
 * @param runner The runner.
 * @since 0.4.0
 */
export function setStepRunner(info: TaskRunInfo, runner: Runner): void {
  runners.set(info, runner);
}

/**
 * The step runner of a run.  Internal.
 * @param info The run information.
 * @returns The runner, or `undefined` when the federation has none.
 * @since 0.4.0
 */
export function stepRunnerOf(info: TaskRunInfo): Runner | undefined {
  return runners.get(info);
}

/**
 * The step runner of a run, made on first use: a run that never touches
 * `ctx.step` has no runner, reads no step state and writes no record.
 * Internal.
 * @param info The run information.
 * @param host Where the runner keeps its records.
 * @param message The run's message.
 * @returns The runner.
 * @since 0.4.0
 */
export function stepRunnerFor(
  info: TaskRunInfo,
  host: StepRunnerHost,
  message: TaskMessage,
): Runner {
  let runner = runners.get(info);
  if (runner == null) runners.set(info, runner = new Runner(host, message));
  return runner;
}
