import { getLogger } from "@logtape/logtape";
import type { MessageDispatcher } from "../processing/dispatcher.ts";
import type { BaseMessage } from "../processing/envelope.ts";
import type { MessageEvent } from "../processing/events.ts";
import { MessageMetrics } from "../processing/metrics.ts";
import { ThroughputRecorder } from "../processing/throughput.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { decodeTaskPayload, encodeTaskPayload } from "../tasks/codec/mod.ts";
import { releaseTaskDeduplication } from "../tasks/dedup.ts";
import type { TaskDefinition, TaskEnqueueResult } from "../tasks/definition.ts";
import type { PreparedTaskMessages } from "../tasks/enqueue.ts";
import { FailedTaskNotFoundError, TaskNotDefinedError } from "../tasks/errors.ts";
import {
  type ListTaskRecordsOptions,
  type TaskRecord,
  type TaskRecordPage,
  TaskRecordStore,
} from "../tasks/failed-store.ts";
import { isTaskMessage } from "../tasks/handler.ts";
import type { TaskMessage } from "../tasks/message.ts";
import { resolveTaskQueue } from "../tasks/routing.ts";
import {
  listStoredSchedules,
  resolveTiming,
  saveSchedule,
  scheduleKey,
  type StoredSchedule,
  type TaskSchedule,
  TaskScheduler,
  type TaskScheduleTiming,
  toTaskSchedule,
} from "../tasks/schedule/mod.ts";
import { validateTaskPayload } from "../tasks/validation.ts";
import type { InternalTaskHost } from "./internal-tasks.ts";
import { TaskStatusTracker } from "./task-status.ts";

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
 * A failed task with its payload decoded, as `getFailedTask()` returns it.
 * @since 0.2.0
 */
export interface FailedTaskDetails extends TaskRecord {
  /**
   * The payload as the handler got it before the schema ran (vocabulary
   * objects rebuilt), or `undefined` when it could not be decoded.
   */
  readonly payload?: unknown;
  /** Why the payload could not be decoded, when it could not. */
  readonly payloadError?: string;
}

/**
 * Operating tasks from the federation: the failed-task store with replay,
 * the completed-task store and recurring tasks.  `Federation` has these
 * methods.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface TaskOperations<TContextData> {
  /**
   * Lists tasks that failed for good (exhausted or permanent), newest
   * first, a page at a time.  Kept for `failedTaskRetention` (7 days by
   * default).
   * @param options A task name, a page size (50 by default) and the
   *                previous page's cursor.
   * @returns The page, with a cursor when there are more.
   * @throws {RangeError} When `limit` is not an integer from 1 to 1000.
   * @example
   * ```ts
   * let page = await federation.listFailedTasks({ taskName: "send-digest", limit: 20 });
   * for (const task of page.records) console.log(task.id, task.error?.message);
   * if (page.cursor) page = await federation.listFailedTasks({ cursor: page.cursor });
   * ```
   */
  listFailedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage>;

  /**
   * Reads one failed task, its payload decoded.
   * @param id The task's message id (`event.messageId`, `ctx.task.id`).
   * @returns The task, or `undefined` when there is none.
   */
  getFailedTask(id: string): Promise<FailedTaskDetails | undefined>;

  /**
   * Enqueues a failed task again, as attempt 0 with the same message id,
   * once its payload passes the task's current schema; its record is then
   * removed (a new failure records it again).
   * @param id The task's message id.
   * @returns The enqueue's result.
   * @throws {FailedTaskNotFoundError} When there is no such failed task.
   * @throws {TaskNotDefinedError} When the task is no longer defined.
   * @throws {TaskValidationError} When the payload fails the current schema;
   *         the record is kept.
   * @throws {TaskQueueNotConfiguredError} When no queue applies to the task.
   */
  retryFailedTask(id: string): Promise<TaskEnqueueResult>;

  /**
   * Removes a failed task's record.
   * @param id The task's message id.
   * @returns Whether there was one.
   */
  discardFailedTask(id: string): Promise<boolean>;

  /**
   * Counts the failed tasks kept, per task name.
   * @returns A map from task name to count (names without failures absent).
   */
  countFailedTasks(): Promise<Map<string, number>>;

  /**
   * Lists completed tasks, newest first, when `completedTaskRetention` is
   * set (none are kept by default).
   * @param options A task name, a page size and a cursor.
   * @returns The page.
   * @throws {RangeError} When `limit` is not an integer from 1 to 1000.
   */
  listCompletedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage>;

  /**
   * Runs a task at every tick of a schedule, enqueued exactly once per tick
   * however many worker processes run.  Schedules live in the key–value
   * store (which must have `cas()`), so they survive restarts on a durable
   * store; workers started with `startQueue()` (task role) run them.
   * Ticks missed while no worker ran are caught up with at most one run.
   * @param task The task's handle.
   * @param data The payload every run gets (the schema's input type).
   * @param options `{ every }` or `{ cron, timezone? }`, and `id`, `baseUrl`.
   * @returns The schedule.
   * @throws {TaskNotDefinedError} When the handle is not this federation's.
   * @throws {TaskValidationError} When the payload fails the schema.
   * @throws {TaskPayloadEncodingError} When the payload cannot be encoded.
   * @throws {TaskQueueNotConfiguredError} When no queue applies to the task.
   * @throws {TypeError} When the options are malformed, the KvStore has no
   *         `cas()`, or there is no base URL.
   * @example
   * ```ts
   * await federation.scheduleTask(pruneSessions, {}, { every: { minutes: 15 } });
   * await federation.scheduleTask(sendDigest, { kind: "daily" }, {
   *   cron: "0 8 * * *",
   *   timezone: "Europe/Paris",
   * });
   * ```
   */
  scheduleTask<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options: TaskScheduleOptions,
  ): Promise<TaskSchedule>;

  /**
   * Removes a schedule; runs already enqueued still run.
   * @param id The schedule's id.
   * @returns Whether there was one.
   */
  unscheduleTask(id: string): Promise<boolean>;

  /**
   * Lists the schedules, by id.
   * @returns The schedules.
   */
  listSchedules(): Promise<TaskSchedule[]>;
}

/**
 * What {@link FederationOperations} needs from the federation.  Internal.
 * @since 0.2.0
 */
export interface OperationsHost<TContextData> extends InternalTaskHost<TContextData> {
  readonly dispatcher: MessageDispatcher<TContextData>;
}

/**
 * The federation's task operations and metrics, kept out of
 * `FederationImpl` to keep it wiring only: it observes the dispatcher to
 * record metrics, keep failed (and completed) tasks and free deduplication
 * reservations, and implements {@link TaskOperations}.  Internal.
 * @since 0.2.0
 */
export class FederationOperations<TContextData> implements TaskOperations<TContextData> {
  /** The message metrics. */
  readonly metrics: MessageMetrics;
  /** The per-minute counters the dashboard reads. */
  readonly throughput: ThroughputRecorder;
  readonly #host: OperationsHost<TContextData>;
  readonly #records: TaskRecordStore;
  readonly #scheduler: TaskScheduler;
  /** Task status records and live updates.  Internal. */
  readonly taskStatus: TaskStatusTracker;

  /**
   * @param host The federation.
   */
  constructor(host: OperationsHost<TContextData>) {
    this.#host = host;
    const { options } = host;
    this.metrics = new MessageMetrics(options.meterProvider);
    this.#records = new TaskRecordStore(options.kv, {
      failedMs: options.failedTaskRetentionMs,
      completedMs: options.completedTaskRetentionMs,
    });
    this.#scheduler = new TaskScheduler({
      kv: options.kv,
      enqueue: (schedule, tick) => this.#enqueueScheduled(schedule, tick),
    });
    this.throughput = new ThroughputRecorder(options.kv);
    this.taskStatus = new TaskStatusTracker(
      options.kv,
      options.pubsub,
      options.taskStatusRetentionMs,
    );
    host.dispatcher.observe(this.metrics.observe);
    host.dispatcher.observe(this.throughput.observe);
    host.dispatcher.observe((event, message) => this.#observeTask(event, message));
    host.dispatcher.observe(this.taskStatus.observe);
  }

  async #observeTask(event: MessageEvent, message: BaseMessage): Promise<void> {
    if (message.type !== "task" || event.type === "retrying") return;
    const task = message as TaskMessage;
    if (task.deduplication != null && typeof task.taskName === "string") {
      await releaseTaskDeduplication(this.#host.options.kv, task);
    }
    // Every message passes here: check the message (a URL parse) only when
    // a record will be written.
    if (event.type === "dropped" || (event.type === "completed" && !this.#records.keepsCompleted)) {
      return;
    }
    if (!isTaskMessage(message)) return;
    if (event.type === "failed") {
      await this.#records.recordFailed(message, event.reason, event.error);
    } else if (event.type === "completed") await this.#records.recordCompleted(message);
  }

  #queueOf(task: { readonly name: string; readonly queue?: MessageQueue }): MessageQueue {
    const { queues, taskQueueResolution } = this.#host.options;
    return resolveTaskQueue(task, {
      taskQueue: queues.task,
      outboxQueue: queues.outbox,
      resolution: taskQueueResolution,
    });
  }

  /**
   * Enqueues prepared task messages, holding their deduplication keys.
   * @param prepared The messages, their queue and options.
   * @param contextData The context data, for starting the workers.
   * @returns One result per message.
   */
  enqueueTaskMessages(
    prepared: PreparedTaskMessages,
    contextData: TContextData,
  ): Promise<TaskEnqueueResult[]> {
    return this.#host.taskEnqueuer.enqueue(prepared, { contextData });
  }

  listFailedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.#records.list("failed", options);
  }

  async getFailedTask(id: string): Promise<FailedTaskDetails | undefined> {
    const record = await this.#records.get("failed", id);
    if (record == null) return undefined;
    try {
      return { ...record, payload: await this.#decode(record) };
    } catch (error) {
      return { ...record, payloadError: error instanceof Error ? error.message : String(error) };
    }
  }

  #decode(record: TaskRecord): Promise<unknown> {
    return decodeTaskPayload(record.encodedPayload, {
      documentLoader: this.#host.options.documentLoader,
    });
  }

  async retryFailedTask(id: string): Promise<TaskEnqueueResult> {
    const record = await this.#records.get("failed", id);
    if (record == null) throw new FailedTaskNotFoundError(String(id));
    const task = this.#host.registry.tasks.get(record.taskName);
    if (task == null) throw new TaskNotDefinedError(record.taskName);
    // The schema may have changed since the task failed: check now rather
    // than have the worker drop it.
    await validateTaskPayload(task, await this.#decode(record));
    const queue = this.#queueOf(task);
    const message: TaskMessage = {
      type: "task",
      id: record.id as TaskMessage["id"],
      baseUrl: record.baseUrl,
      taskName: record.taskName,
      data: record.encodedPayload,
      started: new Date().toISOString(),
      attempt: 0,
      ...(record.orderingKey == null ? {} : { orderingKey: record.orderingKey }),
      traceContext: {},
    };
    const queueOptions = record.orderingKey == null ? {} : { orderingKey: record.orderingKey };
    await this.#host.taskEnqueuer.enqueue({
      queue,
      messages: [message],
      queueOptions,
      deduplicated: false,
    });
    await this.#records.delete("failed", id);
    logger.info("Retried the failed task {taskName} {messageId}.", {
      taskName: record.taskName,
      messageId: record.id,
    });
    return { status: "enqueued", messageId: record.id };
  }

  discardFailedTask(id: string): Promise<boolean> {
    return this.#records.delete("failed", id);
  }

  countFailedTasks(): Promise<Map<string, number>> {
    return this.#records.count("failed");
  }

  listCompletedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.#records.list("completed", options);
  }

  async scheduleTask<TData, TInput>(
    handle: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options: TaskScheduleOptions,
  ): Promise<TaskSchedule> {
    const task = this.#host.registry.tasks.resolve(
      handle as TaskDefinition<TContextData, unknown, unknown>,
    );
    if (task == null) throw new TaskNotDefinedError(String(handle?.name));
    const timing = resolveTiming(options);
    const { kv, origin } = this.#host.options;
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
    this.#queueOf(task);
    await validateTaskPayload(task, data);
    const encoded = await encodeTaskPayload(data);
    const id = options.id ?? await defaultScheduleId(task.name, encoded);
    const now = Date.now();
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
    return toTaskSchedule(saved);
  }

  async unscheduleTask(id: string): Promise<boolean> {
    const { kv } = this.#host.options;
    const key = scheduleKey(String(id));
    const present = await kv.get(key) !== undefined;
    await kv.delete(key);
    this.#scheduler.wake();
    return present;
  }

  async listSchedules(): Promise<TaskSchedule[]> {
    const { kv } = this.#host.options;
    if (typeof kv.list !== "function") return [];
    const now = Date.now();
    return (await listStoredSchedules(kv))
      .sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      .map((schedule) => toTaskSchedule(schedule, now));
  }

  /**
   * Runs the recurring tasks until `signal` aborts.
   * @param signal Stops them.
   * @returns Resolves once stopped.
   */
  runSchedules(signal: AbortSignal | undefined): Promise<void> {
    return this.#scheduler.run(signal);
  }

  async #enqueueScheduled(schedule: StoredSchedule, tick: number): Promise<void> {
    const task = this.#host.registry.tasks.get(schedule.taskName);
    if (task == null) {
      throw new TaskNotDefinedError(schedule.taskName);
    }
    const queue = this.#queueOf(task);
    const message: TaskMessage = {
      type: "task",
      id: crypto.randomUUID(),
      baseUrl: schedule.baseUrl,
      taskName: schedule.taskName,
      data: schedule.data,
      started: new Date().toISOString(),
      attempt: 0,
      traceContext: {},
      schedule: { id: schedule.id, tick: new Date(tick).toISOString() },
    };
    await this.#host.taskEnqueuer.enqueue({
      queue,
      messages: [message],
      queueOptions: {},
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
