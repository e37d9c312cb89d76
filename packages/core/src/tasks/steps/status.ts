// The durable steps a task's status record shows: built from a runner's
// notices, and read back from stored records.
import type { StepNotice } from "./host.ts";
import type { TaskStepsStatus } from "./types.ts";

/**
 * The most recorded step ids a status record lists (the last ones), so
 * that it fits a pub/sub message.
 * @since 0.4.0
 */
export const MAX_STATUS_STEP_IDS = 50;

/**
 * Reads a {@link TaskStepsStatus} from a stored record.  Internal.
 * @param value The stored value.
 * @returns The status, or `undefined` when it is not one.
 * @since 0.4.0
 */
export function readTaskStepsStatus(value: unknown): TaskStepsStatus | undefined {
  if (value == null || typeof value !== "object") return undefined;
  const v = value as Partial<Record<keyof TaskStepsStatus, unknown>>;
  if (
    !Array.isArray(v.recorded) || !v.recorded.every((id) => typeof id === "string") ||
    typeof v.recordedCount !== "number"
  ) return undefined;
  const c = v.current as Partial<NonNullable<TaskStepsStatus["current"]>> | undefined;
  const current = c != null && typeof c.id === "string" && typeof c.kind === "string" &&
      typeof c.phase === "string"
    ? { id: c.id, kind: c.kind, phase: c.phase } as TaskStepsStatus["current"]
    : undefined;
  return {
    ...(current == null ? {} : { current }),
    recorded: v.recorded as string[],
    recordedCount: v.recordedCount,
  };
}

/**
 * The status a step notice makes, and whether to write the status record
 * now.  Internal.
 * @param notice The notice.
 * @returns The status and whether to write it.
 * @since 0.4.0
 */
export function stepsStatusOf(
  notice: StepNotice,
): { readonly status: TaskStepsStatus; readonly write: boolean } {
  const recorded = notice.recorded.length > MAX_STATUS_STEP_IDS
    ? notice.recorded.slice(-MAX_STATUS_STEP_IDS)
    : notice.recorded;
  const base = { recorded, recordedCount: notice.recorded.length };
  if (notice.phase === "recorded") return { status: base, write: false };
  const phase = notice.phase === "started"
    ? "running"
    : notice.kind === "sleep" || notice.kind === "run"
    ? "sleeping"
    : "waiting";
  return {
    status: { current: { id: notice.id, kind: notice.kind, phase }, ...base },
    write: notice.write,
  };
}

const lastStatus = new WeakMap<object, TaskStepsStatus>();

/**
 * Keeps the latest steps status of a run's message, for the observers of
 * how the run ended (webhooks).  Internal.
 * @param message The run's message.
 * @param status The status.
 * @since 0.4.0
 */
export function rememberStepsStatus(message: object, status: TaskStepsStatus): void {
  lastStatus.set(message, status);
}

/**
 * The latest steps status of a run's message, if its run used steps.
 * Internal.
 * @param message The message, as the dispatcher's observers get it.
 * @returns The status, or `undefined`.
 * @since 0.4.0
 */
export function rememberedStepsStatus(message: object): TaskStepsStatus | undefined {
  return lastStatus.get(message);
}
