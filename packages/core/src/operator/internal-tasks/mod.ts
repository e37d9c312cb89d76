/**
 * Fedwork's own tasks (webhook requests, host probes): their name prefix,
 * a schema for their JSON payloads, and enqueueing them through the task
 * enqueuer like any task.
 * @module
 * @since 0.2.0
 */
export {
  enqueueInternalTask,
  INTERNAL_TASK_PREFIX,
  type InternalTaskPort,
  stringRecordSchema,
} from "./internal-tasks.ts";
