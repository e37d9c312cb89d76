/**
 * Task status records: every task's state (queued, running, progress,
 * completed, failed) kept in the key–value store and published as it
 * changes, for `getTaskStatus()`, `watchTask()` and `watchTasks()`.
 * @module
 * @since 0.2.0
 */
export {
  TASK_UPDATES_TOPIC,
  type TaskStatusOperations,
  TaskStatusTracker,
  type WatchTaskOptions,
} from "./tracker.ts";
export {
  decodeTaskUpdate,
  encodeTaskUpdate,
  isTerminalTaskState,
  type TaskProgress,
  type TaskState,
  type TaskStatus,
  TaskStatusStore,
  type TaskUpdate,
  TERMINAL_TASK_STATES,
} from "./store.ts";
