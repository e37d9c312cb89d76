/**
 * Recurring tasks: `scheduleTask()`, `unscheduleTask()`, `listSchedules()`
 * and the loop that enqueues each tick once across processes.
 * @module
 * @since 0.2.0
 */
export { type TaskScheduleOptions, TaskSchedules, type TaskSchedulesPort } from "./schedules.ts";
