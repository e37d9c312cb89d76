// The `concurrency` and `rateLimit` options of defineTask(): their types
// and their checks at definition time.
import { assertKnownOptions } from "../options/known-options.ts";
import { positiveDurationOption, positiveIntegerOption } from "../options/value-options.ts";
import type { KvStore } from "../kv/kv-store.ts";
import type { DurationInput } from "../time/duration.ts";
import { TaskDefinitionError } from "./errors.ts";

/**
 * The `concurrency` option of `defineTask()`: at most `limit` runs of the
 * task per key at once, across every worker and process of the federation.
 * @typeParam TData The payload, as the handler gets it.
 * @since 0.4.0
 */
export interface TaskConcurrencyOptions<TData> {
  /**
   * The key of a run, from its payload: runs with the same key share the
   * limit, runs with other keys do not wait for them.  A non-empty string
   * of at most 1024 characters.
   */
  readonly key: (data: TData) => string;
  /** How many runs per key may run at once; an integer from 1 to 10,000. */
  readonly limit: number;
}

/**
 * The `rateLimit` option of `defineTask()`: at most `limit` starts of the
 * task per `period` (per key when `key` is given), across every worker and
 * process of the federation.  Starts are spread evenly, one every
 * `period / limit`; the others wait in order.
 * @typeParam TData The payload, as the handler gets it.
 * @since 0.4.0
 */
export interface TaskRateLimitOptions<TData> {
  /** How many starts per period; an integer from 1 to 1,000,000. */
  readonly limit: number;
  /** The period, such as `{ seconds: 1 }`; positive, at most a day. */
  readonly period: DurationInput;
  /**
   * The key of a run, from its payload: each key has its own rate.  One
   * rate for the whole task when omitted.  A non-empty string of at most
   * 1024 characters.
   */
  readonly key?: (data: TData) => string;
}

/** A checked `concurrency` option.  Internal. */
export interface ResolvedTaskConcurrency {
  readonly key: (data: unknown) => string;
  readonly limit: number;
}

/** A checked `rateLimit` option.  Internal. */
export interface ResolvedTaskRateLimit {
  readonly limit: number;
  readonly periodMs: number;
  readonly key?: (data: unknown) => string;
}

/** The longest key a `concurrency` or `rateLimit` key function may return. */
export const MAX_TASK_LIMIT_KEY_LENGTH = 1024;
const MAX_CONCURRENCY_LIMIT = 10_000;
const MAX_RATE_LIMIT = 1_000_000;
const MAX_RATE_PERIOD_MS = 24 * 60 * 60 * 1000;

/**
 * Runs one check, turning its error into a {@link TaskDefinitionError}
 * naming the option.
 */
function checked<T>(taskName: string, option: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw new TaskDefinitionError(
      taskName,
      option,
      `The task ${JSON.stringify(taskName)} has an invalid ${option}: ${(error as Error).message}`,
    );
  }
}

function checkObject(taskName: string, option: string, value: unknown, known: string[]): void {
  if (typeof value !== "object" || value == null || Array.isArray(value)) {
    throw new TaskDefinitionError(
      taskName,
      option,
      `The ${option} option of the task ${JSON.stringify(taskName)} must be an object; got ${
        value === null ? "null" : Array.isArray(value) ? "an array" : typeof value
      }.`,
    );
  }
  checked(taskName, option, () => assertKnownOptions(value, known, { prefix: `${option}.` }));
}

function checkKeyFunction(taskName: string, option: string, key: unknown): void {
  if (typeof key !== "function") {
    throw new TaskDefinitionError(
      taskName,
      option,
      `The ${option} option of the task ${JSON.stringify(taskName)} must be a function of ` +
        `the payload returning a string; got ${key === null ? "null" : typeof key}.`,
    );
  }
}

/**
 * Checks a task's `concurrency` option.  Internal.
 * @param taskName The task's name.
 * @param value The option, as given.
 * @returns The checked option, or `undefined` when it is not given.
 * @throws {TaskDefinitionError} When it is not an object, has an unknown
 *         field, or `key` or `limit` is missing or wrong; the error names
 *         the field, such as `concurrency.limit`.
 * @since 0.4.0
 */
export function checkTaskConcurrency(
  taskName: string,
  value: unknown,
): ResolvedTaskConcurrency | undefined {
  if (value === undefined) return undefined;
  checkObject(taskName, "concurrency", value, ["key", "limit"]);
  const { key, limit } = value as Partial<TaskConcurrencyOptions<unknown>>;
  checkKeyFunction(taskName, "concurrency.key", key);
  if (limit === undefined) {
    throw new TaskDefinitionError(
      taskName,
      "concurrency.limit",
      `The concurrency.limit option of the task ${JSON.stringify(taskName)} is required.`,
    );
  }
  const checkedLimit = checked(
    taskName,
    "concurrency.limit",
    () => positiveIntegerOption(limit, "concurrency.limit", 1, MAX_CONCURRENCY_LIMIT),
  );
  return { key: key as (data: unknown) => string, limit: checkedLimit };
}

/**
 * Checks a task's `rateLimit` option.  Internal.
 * @param taskName The task's name.
 * @param value The option, as given.
 * @returns The checked option, or `undefined` when it is not given.
 * @throws {TaskDefinitionError} When it is not an object, has an unknown
 *         field, or `limit`, `period` or `key` is missing or wrong; the
 *         error names the field, such as `rateLimit.period`.
 * @since 0.4.0
 */
export function checkTaskRateLimit(
  taskName: string,
  value: unknown,
): ResolvedTaskRateLimit | undefined {
  if (value === undefined) return undefined;
  checkObject(taskName, "rateLimit", value, ["limit", "period", "key"]);
  const { key, limit, period } = value as Partial<TaskRateLimitOptions<unknown>>;
  for (const [field, given] of [["limit", limit], ["period", period]] as const) {
    if (given === undefined) {
      throw new TaskDefinitionError(
        taskName,
        `rateLimit.${field}`,
        `The rateLimit.${field} option of the task ${JSON.stringify(taskName)} is required.`,
      );
    }
  }
  const checkedLimit = checked(
    taskName,
    "rateLimit.limit",
    () => positiveIntegerOption(limit, "rateLimit.limit", 1, MAX_RATE_LIMIT),
  );
  const periodMs = checked(
    taskName,
    "rateLimit.period",
    () => positiveDurationOption(period, "rateLimit.period", 0, MAX_RATE_PERIOD_MS),
  );
  if (key !== undefined) checkKeyFunction(taskName, "rateLimit.key", key);
  return {
    limit: checkedLimit,
    periodMs,
    ...(key === undefined ? {} : { key: key as (data: unknown) => string }),
  };
}

/**
 * Checks that a task with `concurrency` or `rateLimit` has a store that
 * can hold them, when the task is defined on a federation (or the
 * federation is made from a builder that defined it).  Internal.
 * @param taskName The task's name.
 * @param options The task's options (or its registration).
 * @param kv The federation's store.
 * @throws {TaskDefinitionError} When the store has no `cas()`.
 * @since 0.4.0
 */
export function checkLimitStore(
  taskName: string,
  options: { readonly concurrency?: unknown; readonly rateLimit?: unknown },
  kv: KvStore,
): void {
  const option = options.concurrency != null
    ? "concurrency"
    : options.rateLimit != null
    ? "rateLimit"
    : undefined;
  if (option == null || typeof kv.cas === "function") return;
  throw new TaskDefinitionError(
    taskName,
    option,
    `The ${option} option of the task ${JSON.stringify(taskName)} needs a KvStore with ` +
      "cas() (MemoryKvStore and the SQLite, PostgreSQL, Redis and Deno KV stores have it); " +
      "the federation's kv has none.",
  );
}
