/**
 * Recurring tasks: timings (interval or cron), their storage in the
 * key–value store, and the scheduler that enqueues each tick once.
 * @module
 * @since 0.2.0
 */
export {
  listStoredSchedules,
  saveSchedule,
  scheduleKey,
  type StoredSchedule,
  type TaskSchedule,
  toTaskSchedule,
} from "./store.ts";
export { SCHEDULE_REFRESH_MS, TaskScheduler, type TaskSchedulerOptions } from "./scheduler.ts";
export { resolveTiming, type StoredTiming, type TaskScheduleTiming } from "./timing.ts";
