import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import { unrefTimer } from "../../time/timer-ref.ts";
import { listStoredSchedules, scheduleKey, type StoredSchedule } from "./store.ts";
import { latestTick, nextTick } from "./timing.ts";

const logger = getLogger(["fedwork", "task", "schedule"]);

/**
 * How often a scheduler reads the schedules again, in milliseconds, to see
 * those created, changed or removed by other processes.  Changes made in
 * its own process wake it at once.
 * @since 0.2.0
 */
export const SCHEDULE_REFRESH_MS = 1_000;

/**
 * What {@link TaskScheduler} needs.
 * @since 0.2.0
 */
export interface TaskSchedulerOptions {
  /** Where schedules live; it must have `list()` and `cas()`. */
  readonly kv: KvStore;
  /**
   * Enqueues one run of a schedule.  Called only by the worker that
   * claimed the tick.
   * @param schedule The schedule.
   * @param tick The tick, in epoch milliseconds.
   */
  readonly enqueue: (schedule: StoredSchedule, tick: number) => Promise<void>;
  /** How often to read the schedules again; {@link SCHEDULE_REFRESH_MS} by default. */
  readonly refreshMs?: number;
}

/**
 * Runs recurring tasks: at each tick of each schedule, the workers of every
 * process race to move the schedule's `lastTick` forward with one
 * `KvStore.cas()`; the one that wins enqueues the task, so a tick is
 * enqueued once however many workers run.  A worker that starts after
 * ticks were missed claims only the latest of them: at most one catch-up
 * run, never a burst.  If the enqueue fails, the claim is given back so
 * that another attempt (the next refresh) can take it.
 * @since 0.2.0
 */
export class TaskScheduler {
  readonly #options: TaskSchedulerOptions;
  readonly #wakers = new Set<() => void>();

  /**
   * @param options The store and how to enqueue.
   */
  constructor(options: TaskSchedulerOptions) {
    this.#options = options;
  }

  /** Makes running loops read the schedules now (one was changed here). */
  wake(): void {
    for (const wake of this.#wakers) wake();
  }

  /**
   * Runs until `signal` aborts.
   * @param signal Stops the loop.
   * @returns Resolves once stopped.
   */
  async run(signal: AbortSignal | undefined): Promise<void> {
    const { kv } = this.#options;
    if (typeof kv.list !== "function" || typeof kv.cas !== "function") {
      logger.debug("The KvStore has no list() or cas(); recurring tasks do not run.");
      return;
    }
    const refreshMs = this.#options.refreshMs ?? SCHEDULE_REFRESH_MS;
    while (signal?.aborted !== true) {
      let waitMs = refreshMs;
      try {
        const next = await this.runDueAt(Date.now(), signal);
        if (next != null) waitMs = Math.min(waitMs, Math.max(0, next - Date.now()));
      } catch (error) {
        logger.error("Failed to read or run the recurring tasks; trying again: {error}", {
          error,
        });
      }
      await this.#sleep(waitMs, signal);
    }
  }

  /**
   * Enqueues every schedule's tick that is due at `now` (the latest one
   * only, for a schedule that missed several).  What {@link run} does on
   * each turn; `@fedwork/testing/app` calls it as its clock moves.
   * @param now The time, in epoch milliseconds.
   * @param signal Stops it between schedules.
   * @returns When the earliest next tick is due, or `undefined`.
   * @throws What reading the store throws.
   * @since 0.4.0
   */
  async runDueAt(now: number, signal?: AbortSignal): Promise<number | undefined> {
    let earliest: number | undefined;
    for (const schedule of await listStoredSchedules(this.#options.kv)) {
      if (signal?.aborted) break;
      await this.#runDue(schedule, now);
      const next = nextTick(schedule.timing, schedule.anchor, Math.max(now, schedule.lastTick));
      if (next != null && (earliest == null || next < earliest)) earliest = next;
    }
    return earliest;
  }

  async #runDue(schedule: StoredSchedule, now: number): Promise<void> {
    const tick = latestTick(schedule.timing, schedule.anchor, now);
    if (tick == null || tick <= schedule.lastTick) return;
    const { kv } = this.#options;
    const key = scheduleKey(schedule.id);
    const claimed = { ...schedule, lastTick: tick };
    if (!await kv.cas!(key, schedule, claimed)) return; // Another worker took it.
    try {
      await this.#options.enqueue(schedule, tick);
      logger.debug("Enqueued the task {taskName} for the tick {tick} of schedule {scheduleId}.", {
        taskName: schedule.taskName,
        scheduleId: schedule.id,
        tick: new Date(tick).toISOString(),
      });
    } catch (error) {
      logger.error(
        "Failed to enqueue the task {taskName} of schedule {scheduleId}; the tick will be " +
          "tried again: {error}",
        { taskName: schedule.taskName, scheduleId: schedule.id, error },
      );
      await kv.cas!(key, claimed, schedule).catch(() => false);
    }
  }

  #sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.#wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      // Schedulers must not keep a process alive on their own: a worker's
      // queue listener does that, and a process that only enqueues should
      // be free to exit.
      unrefTimer(timer);
      signal?.addEventListener("abort", done, { once: true });
      this.#wakers.add(done);
    });
  }
}
