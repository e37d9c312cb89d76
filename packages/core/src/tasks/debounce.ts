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
  readonly previousId?: string;
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
 * Enqueues one debounced message: into the queue first, delayed, then its
 * id becomes the key's latest.  In that order, a crash in between leaves an
 * earlier message of the burst as the latest (it runs with its payload)
 * rather than a latest id no queue holds (nothing would run).
 * @param kv The federation's store; it must have `cas()`.
 * @param message The message, with its `debounce` field.
 * @param debounce The checked option.
 * @param queueOptions The other queue options (ordering key, priority).
 * @param enqueue Where the message goes.
 * @param holdMs How long the store keeps a burst after its last enqueue
 *               besides the delay and the maximum wait.
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
): Promise<number> {
  const kvKey = taskDebounceKvKey(message.taskName, message.debounce!.key);
  const { delayMs, maxWaitMs } = debounce;
  const ttl = { milliseconds: delayMs + (maxWaitMs ?? 0) + holdMs };
  let current = await kv.get(kvKey);
  let now = Date.now();
  const dueIn = (state: DebounceState | undefined): number =>
    state == null || maxWaitMs == null
      ? delayMs
      : Math.max(0, Math.min(delayMs, state.firstAt + maxWaitMs - now));
  const next = (): DebounceState | undefined => {
    if (!isDebounceState(current)) return undefined;
    // A burst maxWait has closed: its latest message still runs.
    if (maxWaitMs != null && now >= current.firstAt + maxWaitMs) return undefined;
    return current;
  };
  let continued = next();
  const due = now + dueIn(continued);
  await enqueue([message], { ...queueOptions, delay: { milliseconds: due - now } });
  for (let round = 0;; round++) {
    const state: DebounceState = continued == null
      ? {
        id: message.id,
        firstAt: now,
        ...(isDebounceState(current) ? { previousId: current.id } : {}),
      }
      : { ...continued, id: message.id };
    if (await kv.cas!(kvKey, current, state, { ttl })) return due;
    // Another enqueue wrote the key in between: this one is the later.
    if (round >= 16) {
      await kv.set(kvKey, state, { ttl });
      return due;
    }
    current = await kv.get(kvKey);
    now = Date.now();
    continued = next();
  }
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
  return state.id !== message.id && state.previousId !== message.id;
}
