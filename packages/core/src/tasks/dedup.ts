import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../kv/kv-store.ts";
import type {
  MessageQueueDeduplicatedEnqueueOptions,
  MessageQueueEnqueueOptions,
} from "../queue/message-queue.ts";
import type { TaskEnqueueResult } from "./definition.ts";
import type { PreparedTaskMessages } from "./enqueue.ts";
import { TaskDeduplicationNotSupportedError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";

const logger = getLogger(["fedwork", "task"]);

/**
 * How long a deduplication key is held at most, counted from the enqueue
 * that took it, when the federation's `taskDeduplicationTtl` is not set:
 * one hour.
 * @since 0.2.0
 */
export const DEFAULT_TASK_DEDUPLICATION_TTL_MS = 60 * 60 * 1000;

/** How long a released reservation's tombstone lives. */
const TOMBSTONE_TTL_MS = 60_000;

/**
 * Where {@link enqueueTaskMessages} puts messages: the federation's enqueue
 * path (span, trace context, workers), once for plain messages and once per
 * message for the queue's native deduplication.
 * @since 0.2.0
 */
export interface TaskMessageSink {
  /** Enqueues messages into the prepared queue. */
  enqueue(messages: readonly TaskMessage[], options: MessageQueueEnqueueOptions): Promise<void>;
  /**
   * Enqueues one message with the queue's `enqueueDeduplicated()`.
   * @returns Whether it was added.
   */
  enqueueDeduplicated(
    message: TaskMessage,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ): Promise<boolean>;
}

/**
 * What {@link enqueueTaskMessages} needs besides the messages.
 * @since 0.2.0
 */
export interface EnqueueTaskMessagesOptions {
  /** Holds reservations for queues that do not deduplicate natively. */
  readonly kv: KvStore;
  /** How long a key is held at most, in milliseconds. */
  readonly ttlMs: number;
  /** Where the messages go. */
  readonly sink: TaskMessageSink;
}

/**
 * The key–value store key of a task deduplication reservation.
 * @param taskName The task's name.
 * @param key The caller's deduplication key.
 * @returns The store key.
 * @since 0.2.0
 */
export function taskDeduplicationKvKey(taskName: string, key: string): KvKey {
  return ["fedwork", "task-deduplication", taskName, key];
}

/**
 * The key a queue deduplicates on: the task's name and the caller's key,
 * so that two tasks may use the same key.
 * @param taskName The task's name.
 * @param key The caller's deduplication key.
 * @returns The queue-level key.
 * @since 0.2.0
 */
export function taskDeduplicationQueueKey(taskName: string, key: string): string {
  return JSON.stringify(["task", taskName, key]);
}

/**
 * Enqueues prepared task messages, holding their deduplication keys:
 * messages without a key go in one batch; of the messages sharing a key
 * only the first is tried, and it goes through the queue's native
 * `enqueueDeduplicated()` (atomic in the queue) or, for other queues, after
 * a reservation taken with the key–value store's `cas()`.
 * @param prepared What `prepareTaskMessages()` returned.
 * @param options The store, the key TTL and where messages go.
 * @returns One result per message, in order.
 * @throws {TaskDeduplicationNotSupportedError} When a message has a key
 *         that neither the queue nor the store can hold; nothing is
 *         enqueued then.
 * @since 0.2.0
 */
export async function enqueueTaskMessages(
  prepared: PreparedTaskMessages,
  options: EnqueueTaskMessagesOptions,
): Promise<TaskEnqueueResult[]> {
  const { messages, queueOptions } = prepared;
  const { kv, ttlMs, sink } = options;
  if (!prepared.deduplicated) {
    if (messages.length > 0) await sink.enqueue(messages, queueOptions);
    return messages.map((message) => ({ status: "enqueued", messageId: message.id }));
  }
  const keyed = messages.filter((message) => message.deduplication != null);
  if (keyed.some((message) => message.deduplication!.via === "kv") && kv.cas == null) {
    throw new TaskDeduplicationNotSupportedError(keyed[0].taskName);
  }
  const results = new Array<TaskEnqueueResult>(messages.length);
  const plain: TaskMessage[] = [];
  const first = new Map<string, number>();
  messages.forEach((message, index) => {
    const key = message.deduplication?.key;
    if (key == null) {
      plain.push(message);
      results[index] = { status: "enqueued", messageId: message.id };
    } else if (first.has(key)) {
      results[index] = { status: "deduplicated", deduplicationKey: key };
    } else {
      first.set(key, index);
    }
  });
  if (plain.length > 0) await sink.enqueue(plain, queueOptions);
  await Promise.all([...first.values()].map(async (index) => {
    const message = messages[index];
    const { key, via } = message.deduplication!;
    const added = via === "queue"
      ? await sink.enqueueDeduplicated(message, {
        ...queueOptions,
        deduplicationKey: taskDeduplicationQueueKey(message.taskName, key),
        deduplicationTtl: { milliseconds: ttlMs },
      })
      : await enqueueReserved(kv, ttlMs, sink, message, queueOptions);
    results[index] = added
      ? { status: "enqueued", messageId: message.id }
      : { status: "deduplicated", deduplicationKey: key };
  }));
  logger.debug("Enqueued {enqueued} of {count} message(s) for the task {taskName}.", {
    taskName: messages[0]?.taskName,
    count: messages.length,
    enqueued: results.filter((result) => result.status === "enqueued").length,
  });
  return results;
}

interface Reservation {
  readonly messageId: string;
}

function isReservation(value: unknown): value is Reservation {
  return typeof value === "object" && value != null &&
    typeof (value as Partial<Reservation>).messageId === "string";
}

async function enqueueReserved(
  kv: KvStore,
  ttlMs: number,
  sink: TaskMessageSink,
  message: TaskMessage,
  queueOptions: MessageQueueEnqueueOptions,
): Promise<boolean> {
  const kvKey = taskDeduplicationKvKey(message.taskName, message.deduplication!.key);
  const reservation: Reservation = { messageId: message.id };
  // A few rounds at most: a failed swap means someone else wrote the key,
  // and the next read sees their reservation (or their tombstone).
  for (let round = 0;; round++) {
    const current = await kv.get(kvKey);
    if (isReservation(current)) return false;
    if (await kv.cas!(kvKey, current, reservation, { ttl: { milliseconds: ttlMs } })) break;
    if (round >= 8) return false;
  }
  try {
    await sink.enqueue([message], queueOptions);
  } catch (error) {
    await releaseReservation(kv, kvKey, message.id);
    throw error;
  }
  return true;
}

async function releaseReservation(kv: KvStore, kvKey: KvKey, messageId: string): Promise<void> {
  // A tombstone rather than a deletion, because only cas() is atomic: the
  // reservation is released only if it is still this message's.
  await kv.cas!(kvKey, { messageId }, null, { ttl: { milliseconds: TOMBSTONE_TTL_MS } });
}

/**
 * Frees the key–value store reservation a task message holds, once the
 * task has finished (completed, failed for good or dropped), unless the
 * reservation has already expired and another message holds the key.
 * Messages whose key the queue holds, or without a key, need nothing.
 * @param kv The federation's store.
 * @param message The finished message.
 * @since 0.2.0
 */
export async function releaseTaskDeduplication(kv: KvStore, message: TaskMessage): Promise<void> {
  const deduplication = message.deduplication;
  if (deduplication?.via !== "kv" || kv.cas == null) return;
  await releaseReservation(
    kv,
    taskDeduplicationKvKey(message.taskName, deduplication.key),
    message.id,
  );
}
