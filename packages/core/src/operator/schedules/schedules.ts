// Recurring tasks as operators see them: scheduleTask(), unscheduleTask(),
// listSchedules(), and the scheduler loop that enqueues each tick through
// the task enqueuer.  The schedule store, the scheduler loop and the
// timing rules sit beside it (store.ts, scheduler.ts, timing.ts).
import { getLogger } from "@logtape/logtape";
import type { KvStore } from "../../kv/kv-store.ts";
import { encodeTaskPayload } from "../../tasks/codec/mod.ts";
import type { TaskDefinition } from "../../tasks/definition.ts";
import type { TaskEnqueuer } from "../../tasks/enqueuer.ts";
import { TaskNotDefinedError } from "../../tasks/errors.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import type { TaskStore } from "../../tasks/registry.ts";
import { defaultTaskPriority } from "../../tasks/enqueue.ts";
import { resolveTaskQueue, type TaskQueueRoutingOptions } from "../../tasks/routing.ts";
import {
  listStoredSchedules,
  saveSchedule,
  scheduleKey,
  type StoredSchedule,
  type TaskSchedule,
  toTaskSchedule,
} from "./store.ts";
import { TaskScheduler } from "./scheduler.ts";
import { resolveTiming, type TaskScheduleTiming } from "./timing.ts";
import { validateTaskPayload } from "../../tasks/validation.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * Options for `Federation.scheduleTask()`: when the task runs (`every` or
 * `cron` with an optional `timezone`), and optionally the schedule's id
 * and the base URL its handlers' contexts get.
 * @since 0.2.0
 */
export type TaskScheduleOptions = TaskScheduleTiming & {
  /**
   * The schedule's id; scheduling again with the same id replaces the
   * schedule (keeping its last run when the timing is unchanged).  By
   * default derived from the task's name and the payload, so scheduling
   * the same task with the same payload at every start is idempotent.
   */
  readonly id?: string;
  /**
   * The base URL of the contexts the task's handler gets.  The
   * federation's `origin` option by default; required without it.
   */
  readonly baseUrl?: string | URL;
};

/**
 * What {@link TaskSchedules} needs from the federation.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface TaskSchedulesPort<TContextData> {
  /** Where schedules are stored; needs `cas()` and `list()`. */
  readonly kv: KvStore;
  /** The federation's tasks. */
  // deno-lint-ignore no-explicit-any
  readonly tasks: TaskStore<TContextData, any>;
  /** The federation's queues and task queue resolution policy. */
  readonly routing: TaskQueueRoutingOptions;
  /** Enqueues each tick's task. */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
  /** The federation's origin, the default base URL of the tasks' contexts. */
  readonly origin?: string;
}

/**
 * The federation's recurring tasks.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export class TaskSchedules<TContextData> {
  readonly #port: TaskSchedulesPort<TContextData>;
  readonly #scheduler: TaskScheduler;

  /**
   * @param port The store, the tasks, their routing and the task enqueuer.
   */
  constructor(port: TaskSchedulesPort<TContextData>) {
    this.#port = port;
    this.#scheduler = new TaskScheduler({
      kv: port.kv,
      enqueue: (schedule, tick) => this.#enqueueScheduled(schedule, tick),
    });
  }

  /**
   * Runs a task at every tick of a schedule; see
   * `TaskOperations.scheduleTask()`.
   * @param handle The task's handle.
   * @param data The payload every run gets.
   * @param options The timing, and `id`, `baseUrl`.
   * @returns The schedule.
   * @throws {TaskNotDefinedError} When the handle is not this federation's.
   * @throws {TypeError} When the options are malformed, the KvStore has no
   *         `cas()`, or there is no base URL.
   */
  async scheduleTask<TData, TInput>(
    handle: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options: TaskScheduleOptions,
  ): Promise<TaskSchedule> {
    const task = this.#port.tasks.resolve(
      handle as TaskDefinition<TContextData, unknown, unknown>,
    );
    if (task == null) throw new TaskNotDefinedError(String(handle?.name));
    const timing = resolveTiming(options);
    const { kv, origin } = this.#port;
    if (typeof kv.cas !== "function" || typeof kv.list !== "function") {
      throw new TypeError(
        "scheduleTask() needs a KvStore with cas() and list(): schedules are stored there " +
          "and each tick is claimed with cas(), so that it runs once across processes.",
      );
    }
    const baseUrl = options.baseUrl ?? origin;
    if (baseUrl == null || !URL.canParse(baseUrl)) {
      throw new TypeError(
        "scheduleTask() needs a base URL for the task's contexts: pass the baseUrl option " +
          "or set the federation's origin option.",
      );
    }
    if (options.id != null && (typeof options.id !== "string" || options.id === "")) {
      throw new TypeError("The id option of scheduleTask() must be a non-empty string.");
    }
    resolveTaskQueue(task, this.#port.routing);
    await validateTaskPayload(task, data);
    const encoded = await encodeTaskPayload(data);
    const id = options.id ?? await defaultScheduleId(task.name, encoded);
    const now = this.#port.taskEnqueuer.now();
    const saved = await saveSchedule(kv, {
      id,
      taskName: task.name,
      data: encoded,
      baseUrl: new URL("/", baseUrl).href,
      timing,
      anchor: now,
      lastTick: now,
      createdAt: now,
    });
    this.#scheduler.wake();
    logger.info("Scheduled the task {taskName} as {scheduleId}.", {
      taskName: task.name,
      scheduleId: id,
    });
    return toTaskSchedule(saved, now);
  }

  /**
   * Removes a schedule.
   * @param id The schedule's id.
   * @returns Whether there was one.
   */
  async unscheduleTask(id: string): Promise<boolean> {
    const { kv } = this.#port;
    const key = scheduleKey(String(id));
    const present = await kv.get(key) !== undefined;
    await kv.delete(key);
    this.#scheduler.wake();
    return present;
  }

  /**
   * Lists the schedules, by id.
   * @returns The schedules.
   */
  async listSchedules(): Promise<TaskSchedule[]> {
    const { kv } = this.#port;
    if (typeof kv.list !== "function") return [];
    const now = this.#port.taskEnqueuer.now();
    return (await listStoredSchedules(kv))
      .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      .map((schedule) => toTaskSchedule(schedule, now));
  }

  /**
   * Runs the recurring tasks until `signal` aborts.
   * @param signal Stops them.
   * @returns Resolves once stopped.
   */
  run(signal: AbortSignal | undefined): Promise<void> {
    return this.#scheduler.run(signal);
  }

  /**
   * Enqueues the ticks due at `now`; see `TaskScheduler.runDueAt()`.
   * @param now The time, in epoch milliseconds.
   * @returns When the earliest next tick is due, or `undefined`.
   * @since 0.4.0
   */
  runDueAt(now: number): Promise<number | undefined> {
    return this.#scheduler.runDueAt(now);
  }

  async #enqueueScheduled(schedule: StoredSchedule, tick: number): Promise<void> {
    const task = this.#port.tasks.get(schedule.taskName);
    if (task == null) {
      throw new TaskNotDefinedError(schedule.taskName);
    }
    const queue = resolveTaskQueue(task, this.#port.routing);
    // A tick runs at the task's own priority.
    const priority = defaultTaskPriority(task, queue);
    const message: TaskMessage = {
      type: "task",
      id: crypto.randomUUID(),
      baseUrl: schedule.baseUrl,
      taskName: schedule.taskName,
      data: schedule.data,
      started: new Date(this.#port.taskEnqueuer.now()).toISOString(),
      attempt: 0,
      traceContext: {},
      schedule: { id: schedule.id, tick: new Date(tick).toISOString() },
      ...priority,
    };
    await this.#port.taskEnqueuer.enqueue({
      queue,
      messages: [message],
      queueOptions: priority,
      deduplicated: false,
    });
  }
}

async function defaultScheduleId(taskName: string, encoded: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(JSON.stringify([taskName, encoded])),
  );
  const hex = [...new Uint8Array(digest).slice(0, 8)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  return `${taskName}:${hex}`;
}
