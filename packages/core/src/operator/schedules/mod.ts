/**
 * Recurring tasks: `scheduleTask()`, `unscheduleTask()`, `listSchedules()`,
 * their timings (interval or cron), their storage in the key–value store
 * and the loop that enqueues each tick once across processes.
 * @module
 * @since 0.2.0
 */
export { type TaskScheduleOptions, TaskSchedules, type TaskSchedulesPort } from "./schedules.ts";
export type { TaskSchedule } from "./store.ts";
export type { TaskScheduleTiming } from "./timing.ts";
