// Operating tasks from the federation: the failed-task store with replay,
// the completed-task store, the status records, and the metrics the
// dispatcher's events feed.
import type { DocumentLoader } from "@fedify/vocab";
import { getLogger } from "@logtape/logtape";
import { httpStatusOf } from "../../activitypub/outbox/errors.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { MessageObserver } from "../../processing/dispatcher.ts";
import type { ObservedAttempt } from "../../processing/observed-attempt.ts";
import type { BaseMessage } from "../../processing/envelope.ts";
import type { MessageEvent, MessageFailedEvent } from "../../processing/events.ts";
import type { MessageMetrics } from "../../processing/metrics.ts";
import type { MessageProducer } from "../../processing/producer.ts";
import { ThroughputRecorder } from "../../processing/throughput.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";
import { decodeTaskPayload } from "../../tasks/codec/mod.ts";
import { releaseTaskDeduplication } from "../../tasks/dedup.ts";
import type { TaskDefinition, TaskEnqueueResult } from "../../tasks/definition.ts";
import { defaultTaskPriority } from "../../tasks/enqueue.ts";
import type { TaskEnqueuer } from "../../tasks/enqueuer.ts";
import {
  FailedTaskNotFoundError,
  TaskNotDefinedError,
  TaskQueueNotConfiguredError,
} from "../../tasks/errors.ts";
import {
  checkRecordKind,
  FAILED_DELIVERY_NAME,
  FAILED_MESSAGE_NAMES,
  type FailedDeliveryInput,
  type ListTaskRecordsOptions,
  type TaskRecord,
  type TaskRecordKind,
  type TaskRecordPage,
  TaskRecordStore,
} from "./record-store.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import { PoisonMessageError } from "../../processing/errors.ts";
import { isTaskMessage } from "../../tasks/handler.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import type { TaskStore } from "../../tasks/registry.ts";
import { resolveTaskQueue, type TaskQueueRoutingOptions } from "../../tasks/routing.ts";
import type { TaskSchedule } from "../schedules/store.ts";
import { validateTaskPayload } from "../../tasks/validation.ts";
import type { TaskScheduleOptions } from "../schedules/mod.ts";
import type { TaskStatusTracker } from "../status/mod.ts";
import { assertKnownOptions } from "../../options/known-options.ts";

const logger = getLogger(["fedwork", "task"]);

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
 * Options for `countFailedTasks()`.
 * @since 0.3.0
 */
export interface CountFailedTasksOptions {
  /**
   * Only tasks (`"task"`), only deliveries (`"delivery"`), or only
   * quarantined inbox or fan-out messages (`"inbox"`, `"fanout"`, since
   * 0.4.0); all by default.
   */
  readonly kind?: TaskRecordKind;
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
   * Lists tasks and outbox deliveries that failed for good (exhausted,
   * permanent, timeout or poison), newest first, a page at a time.  Kept
   * for `failedTaskRetention` (7 days by default); deliveries (`kind:
   * "delivery"`, task name `"fedwork:delivery"`) unless
   * `keepFailedDeliveries` is `false`.  Poison messages (handed out more
   * than `maxDeliveries` times without an outcome; `reason: "poison"`,
   * since 0.4.0) of every kind are kept too: inbox and fan-out messages as
   * `kind: "inbox"` / `"fanout"` (task names `"fedwork:inbox"`,
   * `"fedwork:fanout"`).
   * @param options A task name, a kind (`"task"` or `"delivery"`), a page
   *                size (50 by default) and the previous page's cursor.
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
   * Reads one failed task, its payload decoded (for a delivery, the
   * activity as JSON-LD).
   * @param id The task's message id (`event.messageId`, `ctx.task.id`).
   * @returns The task, or `undefined` when there is none.
   */
  getFailedTask(id: string): Promise<FailedTaskDetails | undefined>;

  /**
   * Enqueues a failed task again, as attempt 0 with the same message id,
   * once its payload passes the task's current schema; its record is then
   * removed (a new failure records it again).  A failed delivery goes back
   * into the outbox queue the same way (signed again when sent), and a
   * quarantined inbox or fan-out message into its queue (since 0.4.0),
   * with a fresh hand-out count.
   * @param id The task's message id.
   * @returns The enqueue's result.
   * @throws {FailedTaskNotFoundError} When there is no such failed task.
   * @throws {TaskNotDefinedError} When the task is no longer defined.
   * @throws {TaskValidationError} When the payload fails the current schema;
   *         the record is kept.
   * @throws {TaskQueueNotConfiguredError} When no queue applies to the task
   *         (for a delivery: there is no outbox queue; for an inbox or
   *         fan-out message: none of that role).
   * @throws {DeadHostError} When a delivery's host is declared dead; release
   *         it with `releaseHost()` first (since 0.3.0).
   */
  retryFailedTask(id: string): Promise<TaskEnqueueResult>;

  /**
   * Removes a failed task's record.
   * @param id The task's message id.
   * @returns Whether there was one.
   */
  discardFailedTask(id: string): Promise<boolean>;

  /**
   * Counts the failed tasks kept, per task name; failed deliveries count
   * under `"fedwork:delivery"`.
   * @param options Only tasks or only deliveries (`kind`, since 0.3.0);
   *                both by default.
   * @returns A map from task name to count (names without failures absent).
   */
  countFailedTasks(options?: CountFailedTasksOptions): Promise<Map<string, number>>;

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
 * What {@link TaskRecords} needs from the federation.  Internal.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.2.0
 */
export interface TaskRecordsPort<TContextData> {
  /** Where records, status and deduplication reservations are kept. */
  readonly kv: KvStore;
  /** Where task updates are published. */
  readonly pubsub: PubSub;
  /** The federation's tasks. */
  // deno-lint-ignore no-explicit-any
  readonly tasks: TaskStore<TContextData, any>;
  /** The federation's queues and task queue resolution policy. */
  readonly routing: TaskQueueRoutingOptions;
  /** Rebuilds vocabulary objects in the payloads of failed tasks. */
  readonly documentLoader: DocumentLoader;
  /** Subscribes to the dispatcher's lifecycle events. */
  readonly observe: (observer: MessageObserver) => unknown;
  /** The message metrics (the producer counts enqueues on them). */
  readonly metrics: MessageMetrics;
  /** Puts replayed deliveries and quarantined messages into their queues. */
  readonly producer: MessageProducer<TContextData>;
  /**
   * Puts replayed tasks into their queues (the wiring owns it).
   * @since 0.4.0
   */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
  /**
   * The task status records, which the records keep up to date from the
   * dispatcher's events (the wiring owns them).
   * @since 0.4.0
   */
  readonly taskStatus: TaskStatusTracker;
  /** How long failed and completed records are kept, in milliseconds. */
  readonly retention: {
    readonly failedMs: number;
    readonly completedMs: number;
  };
  /**
   * Whether outbox deliveries that fail for good are kept with the failed
   * tasks (the `keepFailedDeliveries` option).
   * @since 0.3.0
   */
  readonly keepFailedDeliveries?: boolean;
  /**
   * Refuses to replay a delivery to a host declared dead (throws
   * `DeadHostError`).
   * @since 0.3.0
   */
  readonly checkDeliveryHost?: (inbox: URL) => Promise<void>;
  /**
   * The queue of the inbox or fan-out role, where a quarantined message of
   * that kind is replayed.
   * @since 0.4.0
   */
  readonly queueOf?: (kind: "inbox" | "fanout") => MessageQueue | undefined;
}

/** What the records read of a queued delivery: an outbox message. */
interface QueuedDelivery extends BaseMessage, Omit<FailedDeliveryInput, "statusCode" | "id"> {
  readonly type: "outbox";
}

/**
 * The federation's task records: it observes the dispatcher to record
 * metrics and throughput, keep failed (and completed) tasks and
 * quarantined messages, keep status records and free deduplication
 * reservations, and implements the failed-task part of
 * {@link TaskOperations}.  Internal; named `FederationOperations` before
 * 0.4.0, when it also owned the task enqueuer.
 * @since 0.4.0
 */
export class TaskRecords<TContextData> {
  /** The message metrics. */
  readonly metrics: MessageMetrics;
  /** The per-minute counters the dashboard reads. */
  readonly throughput: ThroughputRecorder;
  readonly #taskEnqueuer: TaskEnqueuer<TContextData>;
  readonly #port: TaskRecordsPort<TContextData>;
  readonly #records: TaskRecordStore;

  /**
   * @param port What the records need from the federation.
   */
  constructor(port: TaskRecordsPort<TContextData>) {
    this.#port = port;
    this.metrics = port.metrics;
    this.#records = new TaskRecordStore(port.kv, {
      failedMs: port.retention.failedMs,
      completedMs: port.retention.completedMs,
      // The task itself: it has both fields, and a lookup on every
      // message's outcome makes no object.
      perTask: (name) => port.tasks.get(name),
    });
    this.throughput = new ThroughputRecorder(port.kv);
    this.#taskEnqueuer = port.taskEnqueuer;
    // Not at all without a meter provider: every message's path.
    if (this.metrics.recording) port.observe(this.metrics.observe);
    port.observe(this.throughput.observe);
    port.observe((attempt) => this.#observeTask(attempt));
    port.observe(port.taskStatus.observe);
  }

  // Not async: most messages need nothing here (a completed task with no
  // deduplication key and no completed-task retention), and this runs for
  // every message.
  // The event is read only when something is to be recorded.
  #observeTask(attempt: ObservedAttempt): Promise<void> | undefined {
    const { message, outcome } = attempt;
    if (message.type === "outbox" && outcome.type === "failed") {
      return this.#recordFailedDelivery(attempt.event as MessageFailedEvent, message);
    }
    if (
      (message.type === "inbox" || message.type === "fanout") && outcome.type === "failed" &&
      outcome.reason === "poison"
    ) {
      return this.#recordFailedMessage(attempt.event as MessageFailedEvent, message);
    }
    if (message.type !== "task" || outcome.type === "retrying") return;
    const task = message as TaskMessage;
    const deduplicated = task.deduplication != null && typeof task.taskName === "string";
    // A record is kept of a task that failed, or completed with a
    // completed-task retention; decided once, here.
    const recorded = outcome.type === "failed" ||
      (outcome.type === "completed" && this.#records.completedRetentionOf(task.taskName) > 0);
    if (!deduplicated && !recorded) return;
    return this.#recordTask(attempt.event, task, deduplicated, recorded);
  }

  /** Keeps a quarantined inbox or fan-out message, whole, for replay. */
  async #recordFailedMessage(event: MessageFailedEvent, message: BaseMessage): Promise<void> {
    const fields = message as BaseMessage & { activityType?: unknown; activityId?: unknown };
    const activityType = typeof fields.activityType === "string"
      ? fields.activityType
      : activityTypeOf((message as { activity?: unknown }).activity);
    const activityId = typeof fields.activityId === "string"
      ? fields.activityId
      : activityIdOf((message as { activity?: unknown }).activity);
    const deliveries = event.error instanceof PoisonMessageError
      ? event.error.deliveries
      : undefined;
    // The trace context of an attempt that never ran is nobody's parent.
    const { traceContext: _trace, ...kept } = message;
    await this.#records.recordFailedMessage(
      { ...kept, type: message.type as "inbox" | "fanout" },
      event.reason,
      event.error,
      {
        ...(activityType == null ? {} : { activityType }),
        ...(activityId == null ? {} : { activityId }),
        ...(deliveries == null ? {} : { deliveries }),
      },
    );
  }

  async #recordFailedDelivery(event: MessageFailedEvent, message: BaseMessage): Promise<void> {
    // A poison delivery is kept whatever keepFailedDeliveries says: it is
    // not a remote inbox failing but a message that kills workers.
    if (
      (this.#port.keepFailedDeliveries !== false || event.reason === "poison") &&
      isQueuedDelivery(message)
    ) {
      await this.#records.recordFailedDelivery(
        { ...message, ...statusCodeOf(event.error) },
        event.reason,
        event.error,
      );
    }
  }

  async #recordTask(
    event: MessageEvent,
    task: TaskMessage,
    deduplicated: boolean,
    recorded: boolean,
  ): Promise<void> {
    if (deduplicated) await releaseTaskDeduplication(this.#port.kv, task);
    // Check the message (a URL parse) only when a record will be written.
    if (!recorded || !isTaskMessage(task)) return;
    if (event.type === "failed") await this.#records.recordFailed(task, event.reason, event.error);
    else await this.#records.recordCompleted(task);
  }

  listFailedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.#records.list("failed", options);
  }

  async getFailedTask(id: string): Promise<FailedTaskDetails | undefined> {
    const record = await this.#records.get("failed", id);
    if (record == null) return undefined;
    if (record.kind === "delivery") {
      try {
        return { ...record, payload: JSON.parse(record.encodedPayload) };
      } catch (error) {
        return { ...record, payloadError: error instanceof Error ? error.message : String(error) };
      }
    }
    try {
      return { ...record, payload: await this.#decode(record) };
    } catch (error) {
      return { ...record, payloadError: error instanceof Error ? error.message : String(error) };
    }
  }

  #decode(record: TaskRecord): Promise<unknown> {
    return decodeTaskPayload(record.encodedPayload, {
      documentLoader: this.#port.documentLoader,
    });
  }

  async retryFailedTask(id: string): Promise<TaskEnqueueResult> {
    const record = await this.#records.get("failed", id);
    if (record == null) throw new FailedTaskNotFoundError(String(id));
    if (record.kind === "delivery") return await this.#retryDelivery(record);
    if (record.kind === "inbox" || record.kind === "fanout") {
      return await this.#retryMessage(record, record.kind);
    }
    const task = this.#port.tasks.get(record.taskName);
    if (task == null) throw new TaskNotDefinedError(record.taskName);
    // The schema may have changed since the task failed: check now rather
    // than have the worker drop it.
    await validateTaskPayload(task, await this.#decode(record));
    const queue = resolveTaskQueue(task, this.#port.routing);
    // The failed attempt's priority is not recorded: the task's own.
    const priority = defaultTaskPriority(task, queue);
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
      ...priority,
    };
    const queueOptions = record.orderingKey == null
      ? priority
      : { orderingKey: record.orderingKey, ...priority };
    await this.#taskEnqueuer.enqueue({
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

  async #retryDelivery(record: TaskRecord): Promise<TaskEnqueueResult> {
    const delivery = record.delivery;
    const queue = this.#port.routing.outboxQueue;
    if (delivery == null) throw new FailedTaskNotFoundError(record.id);
    if (queue == null) {
      throw new TaskQueueNotConfiguredError(
        FAILED_DELIVERY_NAME,
        false,
        `The failed delivery ${JSON.stringify(record.id)} cannot be replayed: there is no ` +
          "outbox queue (queue: { outbox: ... }) to put it back into.",
      );
    }
    await this.#port.checkDeliveryHost?.(new URL(delivery.inbox));
    const message: QueuedDelivery = {
      type: "outbox",
      id: record.id as QueuedDelivery["id"],
      baseUrl: record.baseUrl,
      started: new Date().toISOString(),
      attempt: 0,
      ...(record.orderingKey == null ? {} : { orderingKey: record.orderingKey }),
      traceContext: {},
      inbox: delivery.inbox,
      sharedInbox: delivery.sharedInbox,
      actorIds: [...delivery.actorIds],
      activity: JSON.parse(record.encodedPayload),
      ...(delivery.activityId == null ? {} : { activityId: delivery.activityId }),
      activityType: delivery.activityType,
      ...(delivery.senderIdentifier == null ? {} : { senderIdentifier: delivery.senderIdentifier }),
    };
    const options = record.orderingKey == null ? {} : { orderingKey: record.orderingKey };
    // Through the one producer, like every message: traced and counted.
    await this.#port.producer.produce(queue, [message], options);
    await this.#records.delete("failed", record.id);
    logger.info("Retried the failed delivery {messageId} to {inbox}.", {
      messageId: record.id,
      inbox: delivery.inbox,
    });
    return { status: "enqueued", messageId: record.id };
  }

  /** Puts a quarantined inbox or fan-out message back into its queue. */
  async #retryMessage(record: TaskRecord, kind: "inbox" | "fanout"): Promise<TaskEnqueueResult> {
    const queue = this.#port.queueOf?.(kind);
    if (queue == null) {
      throw new TaskQueueNotConfiguredError(
        FAILED_MESSAGE_NAMES[kind],
        false,
        `The failed ${kind} message ${JSON.stringify(record.id)} cannot be replayed: there is ` +
          `no ${kind} queue (queue: { ${kind}: ... }) to put it back into.`,
      );
    }
    const stored = JSON.parse(record.encodedPayload) as Record<string, unknown>;
    const message = {
      ...stored,
      type: kind,
      id: record.id as BaseMessage["id"],
      baseUrl: record.baseUrl,
      started: new Date().toISOString(),
      attempt: 0,
      traceContext: {},
    } as BaseMessage;
    delete (message as { dueAt?: string }).dueAt;
    const options = record.orderingKey == null ? {} : { orderingKey: record.orderingKey };
    await this.#port.producer.produce(queue, [message], options);
    await this.#records.delete("failed", record.id);
    logger.info("Retried the failed {kind} message {messageId}.", {
      kind,
      messageId: record.id,
    });
    return { status: "enqueued", messageId: record.id };
  }

  discardFailedTask(id: string): Promise<boolean> {
    return this.#records.delete("failed", id);
  }

  countFailedTasks(options: CountFailedTasksOptions = {}): Promise<Map<string, number>> {
    assertKnownOptions(options, ["kind"], { where: "countFailedTasks()" });
    const kind = options?.kind;
    checkRecordKind(kind);
    return this.#records.count("failed", kind);
  }

  listCompletedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.#records.list("completed", options);
  }
}

function isQueuedDelivery(message: BaseMessage): message is QueuedDelivery {
  const delivery = message as Partial<QueuedDelivery>;
  return typeof delivery.inbox === "string" && typeof delivery.activityType === "string" &&
    Array.isArray(delivery.actorIds) && typeof delivery.baseUrl === "string";
}

/** The `type` of a JSON-LD activity, when it is a plain string. */
function activityTypeOf(activity: unknown): string | undefined {
  const type = (activity as { type?: unknown } | null)?.type;
  return typeof type === "string" ? type.slice(0, 200) : undefined;
}

/** The `id` of a JSON-LD activity, when it is a plain string. */
function activityIdOf(activity: unknown): string | undefined {
  const id = (activity as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id.slice(0, 2048) : undefined;
}

/** The last HTTP status of a delivery error, as a record field. */
function statusCodeOf(error: unknown): { statusCode?: number } {
  const statusCode = httpStatusOf(error);
  return statusCode == null ? {} : { statusCode };
}
