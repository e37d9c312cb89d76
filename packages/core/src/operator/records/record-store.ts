import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import type { TaskMessage } from "../../tasks/message.ts";
import {
  describeError,
  type ErrorDescription,
  readErrorDescription,
} from "../../processing/error-description.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveIntegerOption } from "../../options/value-options.ts";

/**
 * The name failed deliveries are kept under in the failed-task store (their
 * `taskName`), so that `countFailedTasks()` counts them apart from tasks.
 * @since 0.3.0
 */
export const FAILED_DELIVERY_NAME = "fedwork:delivery";

/**
 * The names quarantined inbox and fan-out messages are kept under in the
 * failed-task store (their `taskName`), so that `countFailedTasks()` counts
 * them apart from tasks.
 * @since 0.4.0
 */
export const FAILED_MESSAGE_NAMES = {
  inbox: "fedwork:inbox",
  fanout: "fedwork:fanout",
} as const;

/**
 * Why a message failed for good, as its record keeps it: a
 * `PermanentError` (`"permanent"`), the retry policy gave up
 * (`"exhausted"`, `"timeout"`), or the queue handed it out more than
 * `maxDeliveries` times without an outcome (`"poison"`, since 0.4.0).
 * @since 0.4.0
 */
export type FailedTaskReason = "permanent" | "exhausted" | "timeout" | "poison";

/**
 * The kinds of record the failed-task store keeps: tasks, outbox
 * deliveries (since 0.3.0), and quarantined inbox and fan-out messages
 * (since 0.4.0).
 * @since 0.4.0
 */
export type TaskRecordKind = "task" | "delivery" | "inbox" | "fanout";

/** Every {@link TaskRecordKind}, for option checks. */
const RECORD_KINDS: readonly TaskRecordKind[] = ["task", "delivery", "inbox", "fanout"];

/**
 * What the record of a quarantined inbox or fan-out message tells about
 * it besides what every record tells.
 * @since 0.4.0
 */
export interface FailedMessageInfo {
  /** The activity's type, e.g. `"Create"`, when the message says. */
  readonly activityType?: string;
  /** The activity's id, when the message says. */
  readonly activityId?: string;
  /**
   * How many times the queue had handed the message out when it was
   * quarantined.
   */
  readonly deliveries?: number;
}

/**
 * What a failed delivery's record tells besides what every record tells:
 * where the activity went and what the inbox answered last.
 * @since 0.3.0
 */
export interface FailedDeliveryInfo {
  /** The inbox URL the activity was POSTed to. */
  readonly inbox: string;
  /** Whether it is a shared inbox. */
  readonly sharedInbox: boolean;
  /** The recipients reached through the inbox. */
  readonly actorIds: readonly string[];
  /** The activity's id, when it has one. */
  readonly activityId?: string;
  /** The activity's type, e.g. `"Create"`. */
  readonly activityType: string;
  /** The identifier of the sending actor. */
  readonly senderIdentifier?: string;
  /** The last HTTP status the inbox answered, when it answered. */
  readonly statusCode?: number;
}

/**
 * A delivery that failed for good, as the failed-task store keeps it.
 * Internal: what `TaskRecords` passes to
 * {@link TaskRecordStore.recordFailedDelivery}.
 * @since 0.3.0
 */
export interface FailedDeliveryInput extends FailedDeliveryInfo {
  /** The outbox message's id. */
  readonly id: string;
  /** The activity, as compact JSON-LD. */
  readonly activity: unknown;
  /** The attempt that failed last, from 0. */
  readonly attempt: number;
  /** When the delivery was first enqueued, ISO 8601. */
  readonly started: string;
  readonly baseUrl: string;
  readonly orderingKey?: string;
}

/**
 * The error a finished task record keeps: what is needed to understand a
 * failure days later, as plain strings.  The same shape as the error of a
 * status record and of a webhook payload ({@link ErrorDescription}), with
 * the stack kept.
 * @since 0.2.0
 */
export type TaskRecordError = ErrorDescription;

/**
 * A task that finished and was kept: failed for good (the failed-task
 * store, for `failedTaskRetention`) or completed (for
 * `completedTaskRetention`).
 * @since 0.2.0
 */
export interface TaskRecord {
  /** The message id, kept across retries; the record's id. */
  readonly id: string;
  /**
   * `"task"` for a task, `"delivery"` for an outbox delivery of an
   * activity to one inbox (since 0.3.0), `"inbox"` or `"fanout"` for a
   * quarantined (poison) message of those kinds (since 0.4.0).
   */
  readonly kind: TaskRecordKind;
  /**
   * The task's name; `"fedwork:delivery"` for deliveries,
   * `"fedwork:inbox"` and `"fedwork:fanout"` for inbox and fan-out
   * messages.
   */
  readonly taskName: string;
  /** How it finished. */
  readonly status: "failed" | "completed";
  /**
   * For failed tasks: `"permanent"` (a `PermanentError`), `"exhausted"`,
   * `"timeout"` (the retry policy gave up after an attempt that ran out
   * of time; since 0.3.0), or `"poison"` (handed out more than
   * `maxDeliveries` times without an outcome, quarantined without running;
   * since 0.4.0).
   */
  readonly reason?: FailedTaskReason;
  /** For failed tasks: the last error. */
  readonly error?: TaskRecordError;
  /** How many attempts ran. */
  readonly attempts: number;
  /** When the task was first enqueued. */
  readonly enqueuedAt: Date;
  /** When it finished. */
  readonly finishedAt: Date;
  /**
   * The payload as it travelled: encoded with Fedwork's task codec (devalue,
   * vocabulary objects as JSON-LD).  Opaque; `getFailedTask()` decodes it.
   * For a delivery, the activity's JSON text; for an inbox or fan-out
   * message, the queue message's JSON text.
   */
  readonly encodedPayload: string;
  /** For a delivery: its inbox, activity and last status (since 0.3.0). */
  readonly delivery?: FailedDeliveryInfo;
  /** For an inbox or fan-out message: its activity (since 0.4.0). */
  readonly message?: FailedMessageInfo;
  /** The base URL of the context that enqueued the task. */
  readonly baseUrl: string;
  /** The ordering key the task was enqueued with, if any. */
  readonly orderingKey?: string;
}

/**
 * Options for listing task records.
 * @since 0.2.0
 */
export interface ListTaskRecordsOptions {
  /** Only records of this task.  All tasks by default. */
  readonly taskName?: string;
  /**
   * Only tasks (`"task"`), only deliveries (`"delivery"`), or only
   * quarantined inbox or fan-out messages (`"inbox"`, `"fanout"`, since
   * 0.4.0).  All by default.
   * @since 0.3.0
   */
  readonly kind?: TaskRecordKind;
  /** How many records at most; 50 by default, at most 1000. */
  readonly limit?: number;
  /** The `cursor` of the previous page, to get the next one. */
  readonly cursor?: string;
}

/**
 * One page of task records, newest first.
 * @since 0.2.0
 */
export interface TaskRecordPage {
  /** The records. */
  readonly records: readonly TaskRecord[];
  /** Pass it as `cursor` to get the next page; absent on the last page. */
  readonly cursor?: string;
}

/** A record as stored: JSON, dates as epoch milliseconds. */
interface StoredRecord {
  readonly id: string;
  /** Absent in records written before 0.3.0: tasks. */
  readonly kind?: "delivery" | "inbox" | "fanout";
  readonly delivery?: FailedDeliveryInfo;
  readonly message?: FailedMessageInfo;
  readonly taskName: string;
  readonly status: "failed" | "completed";
  readonly reason?: FailedTaskReason;
  readonly error?: TaskRecordError;
  readonly attempts: number;
  readonly enqueuedAt: number;
  readonly finishedAt: number;
  readonly data: string;
  readonly baseUrl: string;
  readonly orderingKey?: string;
}

/**
 * A task's own retention, in milliseconds, where it has one.  Internal.
 * @since 0.3.0
 */
export type TaskRetentionLookup = (
  taskName: string,
) => { readonly failedRetentionMs?: number; readonly completedRetentionMs?: number } | undefined;

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

/**
 * Keeps finished tasks in the federation's key–value store: failed ones
 * with their encoded payload, error and attempts, and optionally completed
 * ones, each kind under its own key prefix and with its own retention (the
 * entries' time to live).  The key–value store is used rather than a table
 * of each queue backend because it is the one store every deployment has,
 * every backend expires entries natively, and failures are few: listing
 * reads the prefix and sorts in memory.
 * @since 0.2.0
 */
export class TaskRecordStore {
  readonly #kv: KvStore;
  readonly #failedRetentionMs: number;
  readonly #completedRetentionMs: number;
  readonly #retentionOf?: TaskRetentionLookup;

  /**
   * @param kv The store.
   * @param retention How long to keep failed and completed records, in
   *                  milliseconds; 0 keeps none.  `perTask` (since 0.3.0)
   *                  gives a task's own retention, which overrides these.
   */
  constructor(
    kv: KvStore,
    retention: {
      readonly failedMs: number;
      readonly completedMs: number;
      readonly perTask?: TaskRetentionLookup;
    },
  ) {
    this.#kv = kv;
    this.#failedRetentionMs = retention.failedMs;
    this.#completedRetentionMs = retention.completedMs;
    this.#retentionOf = retention.perTask;
  }

  /** Whether completed tasks are kept, unless a task says otherwise. */
  get keepsCompleted(): boolean {
    return this.#completedRetentionMs > 0;
  }

  /**
   * How long a task's completed runs are kept, in milliseconds (0: none).
   * @param taskName The task's name.
   * @returns The task's own retention, else the federation's.
   * @since 0.3.0
   */
  completedRetentionOf(taskName: string): number {
    return this.#retentionOf?.(taskName)?.completedRetentionMs ?? this.#completedRetentionMs;
  }

  /**
   * How long a task's failed runs are kept, in milliseconds (0: none).
   * @param taskName The task's name.
   * @returns The task's own retention, else the federation's.
   * @since 0.3.0
   */
  failedRetentionOf(taskName: string): number {
    return this.#retentionOf?.(taskName)?.failedRetentionMs ?? this.#failedRetentionMs;
  }

  /** Whether failed tasks are kept. */
  get keepsFailed(): boolean {
    return this.#failedRetentionMs > 0;
  }

  /**
   * Keeps a task that failed for good, replacing an older record of the
   * same message (a replay that failed again).
   * @param message The task's message, as its last attempt got it.
   * @param reason Why it failed.
   * @param error The last error.
   */
  async recordFailed(
    message: TaskMessage,
    reason: FailedTaskReason,
    error: unknown,
  ): Promise<void> {
    const retentionMs = this.failedRetentionOf(message.taskName);
    if (retentionMs <= 0) return;
    await this.#kv.set(
      recordKey("failed", message.id),
      toStored(message, "failed", { reason, error: describeError(error, { stack: true }) }),
      { ttl: { milliseconds: retentionMs } },
    );
  }

  /**
   * Keeps a delivery that failed for good, replacing an older record of
   * the same message.
   * @param delivery The delivery.
   * @param reason Why it failed.
   * @param error The last error.
   */
  async recordFailedDelivery(
    delivery: FailedDeliveryInput,
    reason: FailedTaskReason,
    error: unknown,
  ): Promise<void> {
    if (!this.keepsFailed) return;
    const started = Date.parse(delivery.started);
    const stored: StoredRecord = {
      id: delivery.id,
      kind: "delivery",
      taskName: FAILED_DELIVERY_NAME,
      status: "failed",
      reason,
      error: describeError(error, { stack: true }),
      attempts: delivery.attempt + 1,
      enqueuedAt: Number.isNaN(started) ? 0 : started,
      finishedAt: Date.now(),
      // The activity is the application's own, already held whole in the
      // queue message; kept as JSON text like a task's encoded payload.
      data: typeof delivery.activity === "string"
        ? delivery.activity
        : JSON.stringify(delivery.activity),
      baseUrl: delivery.baseUrl,
      ...(delivery.orderingKey == null ? {} : { orderingKey: delivery.orderingKey }),
      delivery: {
        inbox: delivery.inbox,
        sharedInbox: delivery.sharedInbox,
        actorIds: [...delivery.actorIds],
        activityType: delivery.activityType,
        ...(delivery.activityId == null ? {} : { activityId: delivery.activityId }),
        ...(delivery.senderIdentifier == null
          ? {}
          : { senderIdentifier: delivery.senderIdentifier }),
        ...(delivery.statusCode == null ? {} : { statusCode: delivery.statusCode }),
      },
    };
    await this.#kv.set(recordKey("failed", delivery.id), stored, {
      ttl: { milliseconds: this.#failedRetentionMs },
    });
  }

  /**
   * Keeps a quarantined inbox or fan-out message whole (as JSON text, so
   * that `retryFailedTask()` can put it back into its queue), replacing an
   * older record of the same message.
   * @param message The queue message, as the quarantined hand-out got it.
   * @param reason Why it failed (`"poison"`).
   * @param error The error, a `PoisonMessageError`.
   * @param info Its activity's type and id and the hand-out count.
   * @since 0.4.0
   */
  async recordFailedMessage(
    message: {
      readonly type: "inbox" | "fanout";
      readonly id: string;
      readonly attempt: number;
      readonly started: string;
      readonly baseUrl: string;
      readonly orderingKey?: string;
    },
    reason: FailedTaskReason,
    error: unknown,
    info: FailedMessageInfo,
  ): Promise<void> {
    if (!this.keepsFailed) return;
    const started = Date.parse(message.started);
    const stored: StoredRecord = {
      id: message.id,
      kind: message.type,
      taskName: FAILED_MESSAGE_NAMES[message.type],
      status: "failed",
      reason,
      error: describeError(error, { stack: true }),
      attempts: message.attempt + 1,
      enqueuedAt: Number.isNaN(started) ? 0 : started,
      finishedAt: Date.now(),
      data: JSON.stringify(message),
      baseUrl: message.baseUrl,
      ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
      message: {
        ...(info.activityType == null ? {} : { activityType: info.activityType }),
        ...(info.activityId == null ? {} : { activityId: info.activityId }),
        ...(info.deliveries == null ? {} : { deliveries: info.deliveries }),
      },
    };
    await this.#kv.set(recordKey("failed", message.id), stored, {
      ttl: { milliseconds: this.#failedRetentionMs },
    });
  }

  /**
   * Keeps a completed task, when completed tasks are kept.
   * @param message The task's message.
   */
  async recordCompleted(message: TaskMessage): Promise<void> {
    const retentionMs = this.completedRetentionOf(message.taskName);
    if (retentionMs <= 0) return;
    await this.#kv.set(recordKey("completed", message.id), toStored(message, "completed", {}), {
      ttl: { milliseconds: retentionMs },
    });
  }

  /**
   * Reads one record.
   * @param status Failed or completed.
   * @param id The message id.
   * @returns The record, or `undefined` when there is none (or it expired).
   */
  async get(status: "failed" | "completed", id: string): Promise<TaskRecord | undefined> {
    if (typeof id !== "string") return undefined;
    const stored = await this.#kv.get<StoredRecord>(recordKey(status, id));
    return isStoredRecord(stored) ? fromStored(stored) : undefined;
  }

  /**
   * Removes one record.
   * @param status Failed or completed.
   * @param id The message id.
   * @returns Whether there was one.
   */
  async delete(status: "failed" | "completed", id: string): Promise<boolean> {
    if (typeof id !== "string") return false;
    const key = recordKey(status, id);
    const present = isStoredRecord(await this.#kv.get(key));
    await this.#kv.delete(key);
    return present;
  }

  /**
   * Lists records newest first, a page at a time.
   * @param status Failed or completed.
   * @param options A task name, a page size and a cursor.
   * @returns The page.
   * @throws {UnknownOptionError} When `options` holds a name it does not know.
   * @throws {RangeError} When `limit` is not an integer from 1 to 1000.
   * @throws {TypeError} When `cursor` is not one this method returned, or
   *         `kind` is not `"task"`, `"delivery"`, `"inbox"` or `"fanout"`.
   */
  async list(
    status: "failed" | "completed",
    options: ListTaskRecordsOptions = {},
  ): Promise<TaskRecordPage> {
    assertKnownOptions(options, ["taskName", "kind", "limit", "cursor"], {
      where: status === "failed" ? "listFailedTasks()" : "listCompletedTasks()",
    });
    const limit = positiveIntegerOption(
      options.limit ?? undefined,
      "limit",
      DEFAULT_LIMIT,
      MAX_LIMIT,
    );
    checkRecordKind(options.kind);
    const after = options.cursor == null ? undefined : parseCursor(options.cursor);
    const all = (await this.#all(status)).filter((record) =>
      (options.taskName == null || record.taskName === options.taskName) &&
      (options.kind == null || (record.kind ?? "task") === options.kind)
    );
    all.sort(newestFirst);
    const start = after == null ? 0 : all.findIndex((record) => newestFirst(record, after) > 0);
    const page = start < 0 ? [] : all.slice(start, start + limit);
    const last = page.at(-1);
    const more = start >= 0 && start + limit < all.length;
    return {
      records: page.map(fromStored),
      ...(more && last != null ? { cursor: formatCursor(last) } : {}),
    };
  }

  /**
   * Counts records per task name.
   * @param status Failed or completed.
   * @param kind Only tasks or only deliveries; both by default.
   * @returns The count of each task name that has records.
   */
  async count(
    status: "failed" | "completed",
    kind?: TaskRecordKind,
  ): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const record of await this.#all(status)) {
      if (kind != null && (record.kind ?? "task") !== kind) continue;
      counts.set(record.taskName, (counts.get(record.taskName) ?? 0) + 1);
    }
    return counts;
  }

  async #all(status: "failed" | "completed"): Promise<StoredRecord[]> {
    const records: StoredRecord[] = [];
    for await (const entry of this.#kv.list(prefixKey(status))) {
      if (isStoredRecord(entry.value)) records.push(entry.value);
    }
    return records;
  }
}

function prefixKey(status: "failed" | "completed"): KvKey {
  return ["fedwork", "task-records", status];
}

function recordKey(status: "failed" | "completed", id: string): KvKey {
  return ["fedwork", "task-records", status, id];
}

function toStored(
  message: TaskMessage,
  status: "failed" | "completed",
  extra: Pick<StoredRecord, "reason" | "error">,
): StoredRecord {
  const started = Date.parse(message.started);
  return {
    id: message.id,
    taskName: message.taskName,
    status,
    ...(extra.reason == null ? {} : { reason: extra.reason }),
    ...(extra.error == null ? {} : { error: extra.error }),
    attempts: message.attempt + 1,
    enqueuedAt: Number.isNaN(started) ? 0 : started,
    finishedAt: Date.now(),
    data: message.data,
    baseUrl: message.baseUrl,
    ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }),
  };
}

function fromStored(stored: StoredRecord): TaskRecord {
  const error = readErrorDescription(stored.error);
  return {
    id: stored.id,
    kind: stored.kind ?? "task",
    taskName: stored.taskName,
    status: stored.status,
    ...(stored.reason == null ? {} : { reason: stored.reason }),
    ...(error == null ? {} : { error }),
    attempts: stored.attempts,
    enqueuedAt: new Date(stored.enqueuedAt),
    finishedAt: new Date(stored.finishedAt),
    encodedPayload: stored.data,
    baseUrl: stored.baseUrl,
    ...(stored.orderingKey == null ? {} : { orderingKey: stored.orderingKey }),
    ...(stored.kind === "delivery" && stored.delivery != null ? { delivery: stored.delivery } : {}),
    ...(stored.message == null ? {} : { message: stored.message }),
  };
}

/**
 * Checks a `kind` option of listing or counting failed tasks.  Internal.
 * @param kind The option's value.
 * @throws {TypeError} When it is not a {@link TaskRecordKind}.
 * @since 0.4.0
 */
export function checkRecordKind(kind: unknown): asserts kind is TaskRecordKind | undefined {
  if (kind != null && !RECORD_KINDS.includes(kind as TaskRecordKind)) {
    throw new TypeError(
      `The kind option must be one of ${RECORD_KINDS.map((k) => JSON.stringify(k)).join(", ")}; ` +
        `got ${JSON.stringify(kind)}.`,
    );
  }
}

function isStoredRecord(value: unknown): value is StoredRecord {
  if (typeof value !== "object" || value == null) return false;
  const record = value as Partial<StoredRecord>;
  return typeof record.id === "string" && typeof record.taskName === "string" &&
    typeof record.data === "string" && typeof record.finishedAt === "number" &&
    typeof record.baseUrl === "string";
}

/** Newest first; ties broken by id so that the order is total. */
function newestFirst(
  a: Pick<StoredRecord, "finishedAt" | "id">,
  b: Pick<StoredRecord, "finishedAt" | "id">,
): number {
  return b.finishedAt - a.finishedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function formatCursor(record: StoredRecord): string {
  return `${record.finishedAt}.${record.id}`;
}

function parseCursor(cursor: string): Pick<StoredRecord, "finishedAt" | "id"> {
  const match = typeof cursor === "string" ? /^(\d+)\.(.+)$/.exec(cursor) : null;
  if (match == null) {
    throw new TypeError(
      `The cursor option must be the cursor of a previous page; got ${JSON.stringify(cursor)}.`,
    );
  }
  return { finishedAt: Number(match[1]), id: match[2] };
}
