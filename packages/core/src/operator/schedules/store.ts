import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import type { Temporal } from "@js-temporal/polyfill";
import { latestTick, nextTick, type StoredTiming } from "./timing.ts";

/**
 * A schedule as the key–value store keeps it: plain JSON, times in epoch
 * milliseconds.  Internal.
 * @since 0.2.0
 */
export interface StoredSchedule {
  readonly id: string;
  readonly taskName: string;
  /** The payload, encoded by the task codec. */
  readonly data: string;
  /** The base URL task handlers' contexts get. */
  readonly baseUrl: string;
  readonly timing: StoredTiming;
  /** Interval ticks are counted from here; no tick is at or before it. */
  readonly anchor: number;
  /** The last tick a worker claimed (and enqueued); `anchor` at first. */
  readonly lastTick: number;
  readonly createdAt: number;
}

/**
 * A recurring task, as `listSchedules()` reports it.
 * @since 0.2.0
 */
export interface TaskSchedule {
  /** The schedule's id: given to `scheduleTask()` or derived from the task and payload. */
  readonly id: string;
  /** The task's name. */
  readonly taskName: string;
  /** The interval, for interval schedules. */
  readonly every?: Temporal.Duration;
  /** The cron pattern, for cron schedules. */
  readonly cron?: string;
  /** The time zone of the cron pattern, when one was given. */
  readonly timezone?: string;
  /** When the schedule was created (or its timing last changed). */
  readonly createdAt: Date;
  /** The last tick a worker enqueued the task for, if any. */
  readonly lastRunAt?: Date;
  /** The next tick, if the schedule has one. */
  readonly nextRunAt?: Date;
}

const PREFIX: KvKey = ["fedwork", "schedules"];

/**
 * The store key of a schedule.
 * @param id The schedule's id.
 * @returns The key.
 * @since 0.2.0
 */
export function scheduleKey(id: string): KvKey {
  return ["fedwork", "schedules", id];
}

/**
 * Tells whether a stored value is a schedule this version understands.
 * @param value The value.
 * @returns `true` for a well-formed schedule.
 * @since 0.2.0
 */
export function isStoredSchedule(value: unknown): value is StoredSchedule {
  if (typeof value !== "object" || value == null) return false;
  const s = value as Partial<StoredSchedule>;
  const timing = s.timing as Partial<{ everyMs: unknown; cron: unknown }> | undefined;
  return typeof s.id === "string" && typeof s.taskName === "string" &&
    typeof s.data === "string" && typeof s.baseUrl === "string" &&
    typeof s.anchor === "number" && typeof s.lastTick === "number" &&
    typeof s.createdAt === "number" && typeof timing === "object" && timing != null &&
    (typeof timing.everyMs === "number" || typeof timing.cron === "string");
}

/**
 * Reads every stored schedule.
 * @param kv The store.
 * @returns The schedules, in no particular order.
 * @since 0.2.0
 */
export async function listStoredSchedules(kv: KvStore): Promise<StoredSchedule[]> {
  const schedules: StoredSchedule[] = [];
  for await (const entry of kv.list(PREFIX)) {
    if (entry.key.length === 3 && isStoredSchedule(entry.value)) schedules.push(entry.value);
  }
  return schedules;
}

/**
 * Creates or replaces a schedule.  When one with the same id exists with
 * the same timing, its anchor and last tick are kept, so that calling
 * `scheduleTask()` again at every start neither skips nor repeats a tick.
 * @param kv The store; it must have `cas()`.
 * @param schedule The new schedule, anchored now.
 * @returns The schedule as stored.
 * @since 0.2.0
 */
export async function saveSchedule(kv: KvStore, schedule: StoredSchedule): Promise<StoredSchedule> {
  const key = scheduleKey(schedule.id);
  for (;;) {
    const current = await kv.get(key);
    const next = isStoredSchedule(current) &&
        JSON.stringify(current.timing) === JSON.stringify(schedule.timing)
      ? {
        ...schedule,
        anchor: current.anchor,
        lastTick: current.lastTick,
        createdAt: current.createdAt,
      }
      : schedule;
    if (await kv.cas!(key, current, next)) return next;
  }
}

/**
 * Describes a stored schedule for `listSchedules()`.
 * @param schedule The stored schedule.
 * @param now The moment `nextRunAt` is counted from.
 * @returns The public view.
 * @since 0.2.0
 */
export function toTaskSchedule(schedule: StoredSchedule, now = Date.now()): TaskSchedule {
  const { timing } = schedule;
  const next = nextTick(timing, schedule.anchor, Math.max(now, schedule.lastTick));
  // A tick that is due but not yet claimed is the next run.
  const due = latestTick(timing, schedule.anchor, now);
  const nextRunAt = due != null && due > schedule.lastTick ? due : next;
  return {
    id: schedule.id,
    taskName: schedule.taskName,
    ...("everyMs" in timing
      ? { every: millisecondsToDuration(timing.everyMs) }
      : { cron: timing.cron, ...(timing.timezone == null ? {} : { timezone: timing.timezone }) }),
    createdAt: new Date(schedule.createdAt),
    ...(schedule.lastTick > schedule.anchor ? { lastRunAt: new Date(schedule.lastTick) } : {}),
    ...(nextRunAt == null ? {} : { nextRunAt: new Date(nextRunAt) }),
  };
}
