// Debounced enqueues, on the key–value store's cas(): every enqueue of a
// burst puts its own message into the queue, delayed, and writes its id as
// the key's latest; a message that is no longer the latest when its turn
// comes is dropped as superseded, so only the last payload of a burst runs.
import { assertKnownOptions } from "../options/known-options.ts";
import { positiveDurationOption } from "../options/value-options.ts";
import type { KvKey, KvStore } from "../kv/kv-store.ts";
import type { MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import type { DurationInput } from "../time/duration.ts";
import type { TaskMessage } from "./message.ts";

/**
 * The `debounce` option of `Context.enqueueTask()`: a burst of enqueues
 * with one key runs the task once, with the last payload, `delay` after the
 * last enqueue (or `maxWait` after the burst's first one, whichever comes
 * first).
 * @since 0.4.0
 */
export interface TaskDebounceOptions {
  /** The burst's key, scoped to the task's name; a non-empty string. */
  readonly key: string;
  /** How long after the last enqueue the task runs; positive. */
  readonly delay: DurationInput;
  /**
   * How long a continuing burst may postpone the run at most, counted from
   * its first enqueue: then the task runs with the latest payload and the
   * next enqueue starts a new burst.  Unbounded by default.
   */
  readonly maxWait?: DurationInput;
}

/**
 * The `debounce` option of `Context.enqueueTaskMany()`: as for
 * `enqueueTask()`, where `key` may also be a function of each payload.
 * @typeParam TInput The payload as it is enqueued.
 * @since 0.4.0
 */
export interface TaskDebounceManyOptions<TInput> extends Omit<TaskDebounceOptions, "key"> {
  /** One key for every payload, or a function of each payload and its index. */
  readonly key: string | ((payload: TInput, index: number) => string);
}

/** A checked `debounce` option, in milliseconds.  Internal. */
export interface ResolvedTaskDebounce {
  readonly delayMs: number;
  readonly maxWaitMs?: number;
}

/** What the store holds under a debounce key. */
interface DebounceState {
  /** The id of the burst's latest message: the one that will run. */
  readonly id: string;
  /** When the burst began, in epoch milliseconds. */
  readonly firstAt: number;
  /** The latest message of the burst `maxWait` closed, which still runs. */
  readonly closedId?: string;
  /**
   * The previous latest, while the latest's enqueue is under way: it runs
   * too, so that a crash in between cannot lose the burst.
   */
  readonly fallbackId?: string;
}

function isDebounceState(value: unknown): value is DebounceState {
  return typeof value === "object" && value != null &&
    typeof (value as Partial<DebounceState>).id === "string" &&
    typeof (value as Partial<DebounceState>).firstAt === "number";
}

/**
 * Checks a `debounce` option.  Internal.
 * @param option The option as the caller passed it.
 * @returns The delay and the maximum wait in milliseconds.
 * @throws {TypeError} When it is not an object, has an unknown field or a
 *         field of the wrong type.
 * @throws {RangeError} When `delay` or `maxWait` is not positive.
 * @since 0.4.0
 */
export function checkTaskDebounce(option: unknown): ResolvedTaskDebounce {
  if (typeof option !== "object" || option == null) {
    throw new TypeError(`The debounce option must be an object; got ${typeof option}.`);
  }
  assertKnownOptions(option, ["key", "delay", "maxWait"], { prefix: "debounce." });
  const { key, delay, maxWait } = option as Partial<TaskDebounceManyOptions<unknown>>;
  checkFlowKey(key, "debounce.key");
  if (delay === undefined) throw new TypeError("The debounce.delay option is required.");
  const delayMs = positiveDurationOption(delay, "debounce.delay", 0);
  if (maxWait === undefined) return { delayMs };
  return { delayMs, maxWaitMs: positiveDurationOption(maxWait, "debounce.maxWait", 0) };
}

/**
 * Checks the `key` of a `debounce` or `throttle` option.  Internal.
 * @throws {TypeError} When it is neither a non-empty string nor a function.
 * @since 0.4.0
 */
export function checkFlowKey(key: unknown, optionName: string): void {
  if (typeof key === "function" || (typeof key === "string" && key !== "")) return;
  throw new TypeError(
    `The ${optionName} option must be a non-empty string (or, for enqueueTaskMany(), a ` +
      `function of each payload); got ${JSON.stringify(key) ?? typeof key}.`,
  );
}

/**
 * The key–value store key of a debounce burst.
 * @param taskName The task's name.
 * @param key The caller's key.
 * @returns The store key.
 * @since 0.4.0
 */
export function taskDebounceKvKey(taskName: string, key: string): KvKey {
  return ["fedwork", "task-debounce", taskName, key];
}

/** Puts messages into the prepared queue (the enqueuer's producer path). */
export type TaskMessageEnqueue = (
  messages: readonly TaskMessage[],
  options: MessageQueueEnqueueOptions,
) => Promise<void>;

/**
 * Enqueues one debounced message, in three steps: its id becomes the key's
 * latest, with the previous latest kept as a fallback; the message goes
 * into the queue, delayed; then the fallback is dropped.  A crash after
 * the first step leaves the fallback runnable, so the burst still runs
 * (with the payload before the lost one); a crash after the second lets
 * both run.  A worker never sees a message it would drop before its id
 * is the latest, however short the delay.
 * @param kv The federation's store; it must have `cas()`.
 * @param message The message, with its `debounce` field.
 * @param debounce The checked option.
 * @param queueOptions The other queue options (ordering key, priority).
 * @param enqueue Where the message goes.
 * @param holdMs How long the store keeps a burst after its last enqueue
 *               besides the delay and the maximum wait.
 * @param clock The clock; `Date.now` by default.
 * @returns When the message is due, in epoch milliseconds.
 * @since 0.4.0
 */
export async function enqueueDebounced(
  kv: KvStore,
  message: TaskMessage,
  debounce: ResolvedTaskDebounce,
  queueOptions: MessageQueueEnqueueOptions,
  enqueue: TaskMessageEnqueue,
  holdMs: number,
  clock: () => number = Date.now,
): Promise<number> {
  const kvKey = taskDebounceKvKey(message.taskName, message.debounce!.key);
  const { delayMs, maxWaitMs } = debounce;
  const ttl = { milliseconds: delayMs + (maxWaitMs ?? 0) + holdMs };
  let written: DebounceState | undefined;
  let due = 0;
  for (let round = 0; written == null; round++) {
    const current = await kv.get(kvKey);
    const now = clock();
    const previous = isDebounceState(current) ? current : undefined;
    // A burst maxWait has closed starts a new one; its latest still runs.
    const closed = previous != null && maxWaitMs != null && now >= previous.firstAt + maxWaitMs;
    const state: DebounceState = previous == null
      ? { id: message.id, firstAt: now }
      : closed
      ? { id: message.id, firstAt: now, closedId: previous.id, fallbackId: previous.id }
      : {
        id: message.id,
        firstAt: previous.firstAt,
        ...(previous.closedId == null ? {} : { closedId: previous.closedId }),
        fallbackId: previous.id,
      };
    due = now +
      (maxWaitMs == null
        ? delayMs
        : Math.max(0, Math.min(delayMs, state.firstAt + maxWaitMs - now)));
    if (await kv.cas!(kvKey, current, state, { ttl })) written = state;
    // Another enqueue wrote the key in between: read it again.
    else if (round >= 16) {
      await kv.set(kvKey, state, { ttl });
      written = state;
    }
  }
  try {
    const delay = { milliseconds: Math.max(0, due - clock()) };
    await enqueue([message], { ...queueOptions, delay });
  } catch (error) {
    // Not in the queue: the fallback is the latest again.
    const { fallbackId, ...rest } = written;
    if (fallbackId != null) await kv.cas!(kvKey, written, { ...rest, id: fallbackId }, { ttl });
    throw error;
  }
  if (written.fallbackId != null) {
    const { fallbackId: _, ...confirmed } = written;
    // Fails only when a later enqueue wrote the key: then it is the latest.
    await kv.cas!(kvKey, written, confirmed, { ttl });
  }
  return due;
}

/**
 * Tells whether a debounced message was superseded by a later enqueue with
 * its key (then it is dropped without an attempt).  A message whose burst
 * the store no longer holds (expired) runs.
 * @param kv The federation's store.
 * @param message The message, with its `debounce` field.
 * @returns `true` when it must not run.
 * @since 0.4.0
 */
export async function isSupersededDebounce(kv: KvStore, message: TaskMessage): Promise<boolean> {
  const state = await kv.get(taskDebounceKvKey(message.taskName, message.debounce!.key));
  if (!isDebounceState(state)) return false;
  const { id } = message;
  return state.id !== id && state.closedId !== id && state.fallbackId !== id;
}
