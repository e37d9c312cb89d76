// Throttled enqueues, on the key–value store's cas(): the first enqueue
// with a key opens a period and goes into the queue; the others within the
// period add nothing and say until when the key is throttled.
import { assertKnownOptions } from "../options/known-options.ts";
import { positiveDurationOption } from "../options/value-options.ts";
import type { KvKey, KvStore } from "../kv/kv-store.ts";
import type { DurationInput } from "../time/duration.ts";
import { checkFlowKey } from "./debounce.ts";

/**
 * The `throttle` option of `Context.enqueueTask()`: the first enqueue with
 * the key in a period is enqueued, the others within that period are
 * dropped (`status: "throttled"`).
 * @since 0.4.0
 */
export interface TaskThrottleOptions {
  /** The key, scoped to the task's name; a non-empty string. */
  readonly key: string;
  /** How long the key stays throttled after an enqueue that went through. */
  readonly period: DurationInput;
}

/**
 * The `throttle` option of `Context.enqueueTaskMany()`: as for
 * `enqueueTask()`, where `key` may also be a function of each payload.
 * @typeParam TInput The payload as it is enqueued.
 * @since 0.4.0
 */
export interface TaskThrottleManyOptions<TInput> extends Omit<TaskThrottleOptions, "key"> {
  /** One key for every payload, or a function of each payload and its index. */
  readonly key: string | ((payload: TInput, index: number) => string);
}

/**
 * Checks a `throttle` option.  Internal.
 * @param option The option as the caller passed it.
 * @returns The period in milliseconds.
 * @throws {TypeError} When it is not an object, has an unknown field or a
 *         field of the wrong type.
 * @throws {RangeError} When `period` is not positive.
 * @since 0.4.0
 */
export function checkTaskThrottle(option: unknown): { readonly periodMs: number } {
  if (typeof option !== "object" || option == null) {
    throw new TypeError(`The throttle option must be an object; got ${typeof option}.`);
  }
  assertKnownOptions(option, ["key", "period"], { prefix: "throttle." });
  const { key, period } = option as Partial<TaskThrottleManyOptions<unknown>>;
  checkFlowKey(key, "throttle.key");
  if (period === undefined) throw new TypeError("The throttle.period option is required.");
  return { periodMs: positiveDurationOption(period, "throttle.period", 0) };
}

/**
 * The key–value store key of a throttle period.
 * @param taskName The task's name.
 * @param key The caller's key.
 * @returns The store key.
 * @since 0.4.0
 */
export function taskThrottleKvKey(taskName: string, key: string): KvKey {
  return ["fedwork", "task-throttle", taskName, key];
}

interface ThrottlePeriod {
  /** When the period ends, in epoch milliseconds. */
  readonly until: number;
  /** The message that opened it. */
  readonly messageId: string;
}

function isThrottlePeriod(value: unknown): value is ThrottlePeriod {
  return typeof value === "object" && value != null &&
    typeof (value as Partial<ThrottlePeriod>).until === "number";
}

/**
 * Opens a throttle period for a message, unless one is open.
 * @param kv The federation's store; it must have `cas()`.
 * @param taskName The task's name.
 * @param key The caller's key.
 * @param messageId The message that would open it.
 * @param periodMs The period.
 * @param clock The clock; `Date.now` by default.
 * @returns `{ opened: true }`, or when the open period ends.
 * @since 0.4.0
 */
export async function openThrottlePeriod(
  kv: KvStore,
  taskName: string,
  key: string,
  messageId: string,
  periodMs: number,
  clock: () => number = Date.now,
): Promise<{ readonly opened: true } | { readonly opened: false; readonly until: number }> {
  const kvKey = taskThrottleKvKey(taskName, key);
  for (let round = 0;; round++) {
    const current = await kv.get(kvKey);
    const now = clock();
    if (isThrottlePeriod(current) && current.until > now) {
      return { opened: false, until: current.until };
    }
    const period: ThrottlePeriod = { until: now + periodMs, messageId };
    if (await kv.cas!(kvKey, current, period, { ttl: { milliseconds: periodMs } })) {
      return { opened: true };
    }
    // Someone else opened it in between: the next read sees their period.
    if (round >= 16) return { opened: false, until: now + periodMs };
  }
}

/**
 * Closes the period a message opened, when its enqueue failed, so that the
 * next enqueue is not throttled by a task that never went in.
 * @param kv The federation's store.
 * @param taskName The task's name.
 * @param key The caller's key.
 * @param messageId The message that opened it.
 * @since 0.4.0
 */
export async function closeThrottlePeriod(
  kv: KvStore,
  taskName: string,
  key: string,
  messageId: string,
): Promise<void> {
  const kvKey = taskThrottleKvKey(taskName, key);
  const current = await kv.get(kvKey);
  if (isThrottlePeriod(current) && current.messageId === messageId) {
    await kv.cas!(kvKey, current, { until: 0, messageId }, { ttl: { seconds: 1 } });
  }
}
