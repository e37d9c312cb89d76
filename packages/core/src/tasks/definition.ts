import type { StandardSchemaV1 } from "@standard-schema/spec";
import {
  assertKnownOptions,
  findUnknownOption,
  unknownOptionMessage,
} from "../options/known-options.ts";
import type { MessageEventListener, MessageEventType } from "../processing/events.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { checkMessagePriority } from "../queue/priority.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { timeLimitToMilliseconds } from "../processing/time-limit.ts";
import { resolveMaxDeliveries } from "../processing/delivery-limit.ts";
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";
import type { TaskDebounceManyOptions, TaskDebounceOptions } from "./debounce.ts";
import { TaskDefinitionError } from "./errors.ts";
import {
  checkTaskConcurrency,
  checkTaskRateLimit,
  type ResolvedTaskConcurrency,
  type ResolvedTaskRateLimit,
  type TaskConcurrencyOptions,
  type TaskRateLimitOptions,
} from "./limit-options.ts";

import type { TaskHandleManyOptions, TaskItem, TaskItemResults } from "./handle-many.ts";
import { checkHandleMany, type HandleManySettings } from "./handle-many-options.ts";
import type { TaskThrottleManyOptions, TaskThrottleOptions } from "./throttle.ts";
import {
  DEFAULT_MAX_TASK_RESULT_BYTES,
  MAX_TASK_RESULT_BYTES_LIMIT,
  type TaskResultValue,
} from "./result.ts";

/**
 * Listeners for the lifecycle events of one task's messages, called after
 * the federation-wide listeners.  A listener that throws is logged and
 * changes nothing.
 * @since 0.2.0
 */
export type TaskEventListeners = {
  readonly [
    // A task message always has its handler: never "unhandled".
    T in Exclude<MessageEventType, "unhandled">
  ]?: MessageEventListener<T>;
};

/**
 * What `defineTask()` takes besides the task's name, generic over the
 * context type the handler gets (the federation's `TaskContext`; the tasks
 * layer knows nothing of federations).  Applications use
 * `TaskDefinitionOptions<TContextData, TSchema>`, which is this with the
 * federation's context.
 * @typeParam TContext The context type handlers get.
 * @typeParam TSchema The payload's Standard Schema.
 * @typeParam TResult What the handler returns: a JSON-compatible value or
 *                    nothing (since 0.3.0).
 * @since 0.2.0
 */
export interface TaskOptions<
  TContext,
  TSchema extends StandardSchemaV1,
  TResult extends TaskResultValue | void = TaskResultValue | void,
> {
  /**
   * The payload's schema: any Standard Schema (Zod, Valibot, ArkType, …).
   * Required.  Payloads are validated when enqueued (the caller's input is
   * what travels) and again on the worker, whose handler gets the schema's
   * output.  Activity Vocabulary objects in a payload are best described as
   * `instanceof` leaves, e.g. `z.instanceof(Create)`.
   */
  readonly schema: TSchema;

  /**
   * Runs the task on a worker.  Throwing (or rejecting) fails the attempt:
   * `onError` is called and the task is retried according to the retry
   * policy.  What it returns is the task's result (since 0.3.0): a
   * JSON-compatible value kept with the `completed` status record (at most
   * `maxResultBytes` as JSON), returned by `getTaskStatus()`, in the last
   * `watchTask()` update and in the `completed` webhook payload.
   * @param ctx A context for the base URL the task was enqueued from.
   * @param data The payload, as the schema outputs it.
   * @returns The result, or nothing.
   */
  readonly handler: (
    ctx: TContext,
    data: StandardSchemaV1.InferOutput<TSchema>,
  ) => Promise<TResult> | TResult;

  /**
   * Decides whether and when a failed attempt is retried.  The
   * federation's `taskRetryPolicy` by default, which itself defaults to
   * exponential backoff.  Not used with a queue that retries natively.
   */
  readonly retryPolicy?: RetryPolicy;

  /**
   * Called each time the handler throws, before the retry decision.  An
   * `onError` that throws is logged and does not stop the retry.
   * @param ctx The context the handler got.
   * @param error What the handler threw.
   * @param data The payload the handler got.
   */
  readonly onError?: (
    ctx: TContext,
    error: unknown,
    data: StandardSchemaV1.InferOutput<TSchema>,
  ) => Promise<void> | void;

  /**
   * A queue for this task alone.  By default the federation's task queue,
   * else its outbox queue (unless `taskQueueResolution` is `"strict"`).
   */
  readonly queue?: MessageQueue;

  /**
   * Listeners for the lifecycle events of this task's messages:
   * `completed`, `retrying` (with the next delay), `failed` (once, when the
   * task fails for good: exhausted, timeout or permanent), `dropped`
   * (with the reason) and `cancelled` (since 0.3.0).  They run after the
   * federation's own listeners.
   * @since 0.2.0
   */
  readonly on?: TaskEventListeners;

  /**
   * The capabilities a worker needs to run this task, e.g. `["gpu"]`: only
   * workers started with `startQueue(data, { capabilities })` listing all
   * of them run it; others leave it queued for a capable worker.  The task
   * is enqueued into a sibling of its queue for this capability set (see
   * `MessageQueue.derive()`), so the queue must support deriving.  Each
   * capability is a non-empty string of at most 64 characters.  None by
   * default: any worker runs the task.
   * @since 0.2.0
   */
  readonly capabilities?: readonly string[];

  /**
   * The time limit of one attempt, or `null` for none.  When it passes,
   * `ctx.task.signal` aborts with a `HandlerTimeoutError` and the attempt
   * fails with the reason `"timeout"`, to be retried by the retry policy
   * like any failure; a handler that has not stopped after the
   * federation's `timeoutGracePeriod` is left running while the worker
   * takes its next message.  The federation's `taskTimeout` (15 minutes by
   * default) when omitted.
   * @example
   * ```ts ignore
   * builder.defineTask("transcode", { schema, handler, timeout: { hours: 1 } });
   * ```
   * @since 0.3.0
   */
  readonly timeout?: DurationInput | null;

  /**
   * How many times a queue may hand one of this task's messages out
   * without an outcome (every worker that took it died or lost its lease
   * before finishing) before it is quarantined: recorded in the
   * failed-task store with `reason: "poison"` instead of being run again.
   * A positive integer; the federation's `maxDeliveries` (5 by default)
   * when omitted.
   * @example
   * ```ts ignore
   * builder.defineTask("render-preview", { schema, handler, maxDeliveries: 2 });
   * ```
   * @since 0.4.0
   */
  readonly maxDeliveries?: number;

  /**
   * The priority of this task's messages when `enqueueTask()` does not
   * give one: an integer from -5 to 5, higher first (see
   * {@link TaskEnqueueCommonOptions.priority}).  0 by default.
   * @example
   * ```ts ignore
   * builder.defineTask("refetch-actor", { schema, handler, priority: -2 });
   * ```
   * @since 0.3.0
   */
  readonly priority?: number;

  /**
   * The largest result kept, in bytes of its JSON text (UTF-8): an integer
   * from 0 to 1,048,576.  A result over it is not kept: the task still
   * completes, its status gets a `resultOmitted` marker instead, and a
   * warning is logged.  4096 by default (see `DEFAULT_MAX_TASK_RESULT_BYTES`
   * for why).
   * @since 0.3.0
   */
  readonly maxResultBytes?: number;

  /**
   * How long this task's completed runs are kept (`listCompletedTasks()`),
   * instead of the federation's `completedTaskRetention`; `0` keeps none.
   * A task whose payloads are large can keep fewer, and a task worth
   * auditing can be kept when the federation keeps none.
   * @example
   * ```ts ignore
   * builder.defineTask("charge-card", { schema, handler, completedRetention: { days: 30 } });
   * ```
   * @since 0.3.0
   */
  readonly completedRetention?: DurationInput | 0;

  /**
   * How long this task's failed runs are kept in the failed-task store,
   * instead of the federation's `failedTaskRetention`; `0` keeps none.
   * @since 0.3.0
   */
  readonly failedRetention?: DurationInput | 0;

  /**
   * At most `limit` runs of this task per key at once, across every worker
   * and process of the federation; runs with other keys run freely.  A run
   * whose key is full does not hold a worker: it goes back into its queue
   * and looks again shortly (no attempt is spent).  Needs a `KvStore` with
   * `cas()`.  None by default.
   * @example
   * ```ts ignore
   * builder.defineTask("import", {
   *   schema,
   *   handler,
   *   concurrency: { key: ({ accountId }) => accountId, limit: 1 },
   * });
   * ```
   * @since 0.4.0
   */
  readonly concurrency?: TaskConcurrencyOptions<StandardSchemaV1.InferOutput<TSchema>>;

  /**
   * At most `limit` starts of this task per `period` (per key when `key`
   * is given), across every worker and process of the federation.  Starts
   * are spread evenly; a run that must wait reserves its start time and
   * goes back into its queue, due then, so excess runs wait in order
   * without polling (no attempt is spent).  Needs a `KvStore` with
   * `cas()`.  None by default.
   * @example
   * ```ts ignore
   * builder.defineTask("send-email", {
   *   schema,
   *   handler,
   *   rateLimit: { limit: 20, period: { seconds: 1 } },
   * });
   * ```
   * @since 0.4.0
   */
  readonly rateLimit?: TaskRateLimitOptions<StandardSchemaV1.InferOutput<TSchema>>;

  /**
   * Absent for a task whose handler gets one payload per run; see
   * `TaskManyOptions` for a handler of many (since 0.4.0).
   */
  readonly handleMany?: undefined;
}

/**
 * What `defineTask()` takes for a task whose handler gets many payloads per
 * run (`handleMany`): a plain task's options, with the handler and
 * `onError` given the run's items instead of one payload.
 * @typeParam TContext The context type handlers get.
 * @typeParam TSchema The payload's Standard Schema.
 * @typeParam TResult The result type of one item.
 * @since 0.4.0
 */
export interface TaskManyOptions<
  TContext,
  TSchema extends StandardSchemaV1,
  TResult extends TaskResultValue | void = TaskResultValue | void,
> extends Omit<TaskOptions<TContext, TSchema, TResult>, "handler" | "onError" | "handleMany"> {
  /** How many items a run gets and how long a worker waits for them. */
  readonly handleMany: TaskHandleManyOptions;

  /**
   * Runs the task with up to `handleMany.size` items.  Throwing (or
   * rejecting) fails every item of the run, each retried by the retry
   * policy on its own; returning an array with a `TaskItemFailure`
   * fails that item alone.  An item cancelled while the run went on ends
   * cancelled whatever the handler returned for it.
   * @param ctx A context for the base URL of the run's first item;
   *            `ctx.task` describes the first item, its `signal` aborts
   *            when any item's time limit passes or the worker shuts down,
   *            and `reportProgress()` reports for every item.
   * @param items The items, in the order the worker took them.
   * @returns Nothing, or one entry per item.
   */
  readonly handler: (
    ctx: TContext,
    items: readonly TaskItem<StandardSchemaV1.InferOutput<TSchema>>[],
  ) => Promise<TaskItemResults<TResult> | void> | TaskItemResults<TResult> | void;

  /**
   * Called when the handler throws, with the run's items, before each
   * item's retry.  Not called for items failed with a
   * `TaskItemFailure`.
   */
  readonly onError?: (
    ctx: TContext,
    error: unknown,
    items: readonly TaskItem<StandardSchemaV1.InferOutput<TSchema>>[],
  ) => Promise<void> | void;
}

const EVENT_TYPES: readonly MessageEventType[] = [
  "completed",
  "retrying",
  "failed",
  "dropped",
  "cancelled",
];

declare const taskContextData: unique symbol;
declare const taskResultType: unique symbol;

/**
 * An opaque handle to a task, returned by {@link TaskRegistry.defineTask}
 * and passed to `Context.enqueueTask()`.  It carries the task's name and
 * schema, and the types of its context data, its payload as the handler
 * receives it (`TData`, the schema's output) and its payload as
 * `enqueueTask()` accepts it (`TInput`, the schema's input).
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TData The payload as the handler receives it.
 * @typeParam TInput The payload as it is enqueued; the same as `TData`
 *                   unless the schema transforms its input.
 * @typeParam TResult What the handler returns (since 0.3.0); `unknown`
 *                    when not known.
 * @since 0.1.0
 */
export interface TaskDefinition<TContextData, TData, TInput = TData, TResult = unknown> {
  /** The name the task was defined with. */
  readonly name: string;
  /** The payload's schema. */
  readonly schema: StandardSchemaV1<TInput, TData>;
  /**
   * Never present at run time: ties the handle to its federation's
   * context data type.
   */
  readonly [taskContextData]?: (data: TContextData) => TContextData;
  /** Never present at run time: carries the handler's result type. */
  readonly [taskResultType]?: () => TResult;
}

/** The names {@link TaskOptions} has; any other is refused. */
const TASK_OPTION_NAMES: readonly string[] = [
  "schema",
  "handler",
  "retryPolicy",
  "onError",
  "queue",
  "on",
  "capabilities",
  "timeout",
  "maxDeliveries",
  "priority",
  "maxResultBytes",
  "completedRetention",
  "failedRetention",
  "concurrency",
  "rateLimit",

  "handleMany",
];

/** The names {@link TaskEnqueueOptions} has; any other is refused. */
const TASK_ENQUEUE_OPTION_NAMES: readonly string[] = [
  "delay",
  "orderingKey",
  "deduplicationKey",
  "priority",
  "capabilities",
  "debounce",
  "throttle",
];

/**
 * Refuses an enqueue options object holding a name that is not one of
 * {@link TaskEnqueueOptions}' (such as BullMQ's `attempts`), so that a
 * setting ported from elsewhere never goes silently without effect.
 * @param options The options as the caller passed them.
 * @param where The method's name, e.g. `"enqueueTask()"`.
 * @throws {UnknownOptionError} On the first unknown name, suggesting the
 *         nearest known one.
 * @since 0.3.0
 */
export function checkTaskEnqueueOptions(options: unknown, where: string): void {
  assertKnownOptions(options, TASK_ENQUEUE_OPTION_NAMES, { where });
}

/**
 * Options for `Context.enqueueTask()` and `Context.enqueueTaskMany()`.
 * Any other name is refused with an `UnknownOptionError`.
 * @since 0.1.0
 */
export type TaskEnqueueOptions =
  & TaskEnqueueCommonOptions
  & TaskEnqueueFlowOptions<
    TaskDebounceOptions,
    TaskThrottleOptions
  >;

/**
 * The `debounce` and `throttle` options, at most one of them: debounce
 * leaves out `delay` and `deduplicationKey` (it sets the delay itself and
 * replaces earlier payloads), throttle leaves out `deduplicationKey`.
 * @typeParam TDebounce The `debounce` option's type.
 * @typeParam TThrottle The `throttle` option's type.
 * @since 0.4.0
 */
export type TaskEnqueueFlowOptions<TDebounce, TThrottle> =
  | { readonly debounce?: undefined; readonly throttle?: undefined }
  | {
    /**
     * Run a burst of enqueues with this key once, with the last payload,
     * the debounce `delay` after the last enqueue (bounded by `maxWait`).
     * Each enqueue resolves to `status: "debounced"`.  Needs a `KvStore`
     * with `cas()`.  Not with `delay`, `deduplicationKey` or `throttle`.
     * @since 0.4.0
     */
    readonly debounce: TDebounce;
    readonly throttle?: undefined;
    readonly delay?: undefined;
    readonly deduplicationKey?: undefined;
  }
  | {
    /**
     * Enqueue only the first task with this key in each `period`; the
     * others resolve to `status: "throttled"` and add nothing.  Needs a
     * `KvStore` with `cas()`.  Not with `deduplicationKey` or `debounce`.
     * @since 0.4.0
     */
    readonly throttle: TThrottle;
    readonly debounce?: undefined;
    readonly deduplicationKey?: undefined;
  };

/**
 * The options of `Context.enqueueTask()` besides `debounce` and
 * `throttle`.
 * @since 0.4.0
 */
export interface TaskEnqueueCommonOptions {
  /** How long to wait before the task may run.  No delay by default. */
  readonly delay?: DurationInput;
  /**
   * Tasks that share an ordering key run one at a time, in the order they
   * were enqueued.  No ordering constraint by default.
   */
  readonly orderingKey?: string;
  /**
   * Enqueue nothing while a task of the same name enqueued with this key is
   * pending (not yet completed, failed for good or dropped; a task waiting
   * for a retry is pending), for at most the federation's
   * `taskDeduplicationTtl` after that enqueue.  The result then has
   * `status: "deduplicated"`.  Keys are scoped to the task's name.  No
   * deduplication by default.
   * @since 0.2.0
   */
  readonly deduplicationKey?: string;
  /**
   * An integer from -5 to 5: a ready task runs before every ready task of
   * lower priority in its queue; equal priorities keep their order.  The
   * task's own `priority` (0 unless `defineTask()` set one) by default.
   * Higher first, as in pg-boss and RabbitMQ (BullMQ counts the other way).
   * Strict: a steady stream of higher-priority tasks can keep lower ones
   * waiting, so keep high priorities for short, bounded work (see the
   * manual).  Tasks sharing an ordering key keep their order whatever
   * their priorities.  Refused with a `TypeError` when the task's queue
   * does not order by priority (`MessageQueue.nativePriority`).
   * @since 0.3.0
   */
  readonly priority?: number;
  /**
   * Capabilities this one task needs besides its definition's own
   * `capabilities`, e.g. `["model:sdxl"]`: it runs only on a worker whose
   * `startQueue(data, { capabilities })` lists every one of both (the
   * union).  It waits, untouched, while no such worker listens.  Like the
   * definition's, it needs a queue that can derive siblings
   * (`MessageQueue.derive()`).  Each is a non-empty string of at most 64
   * characters.  None by default.
   * @since 0.3.0
   */
  readonly capabilities?: readonly string[];
}

/**
 * Options for `Context.enqueueTaskMany()`: those of `enqueueTask()`, where
 * `deduplicationKey` may also be a function giving each payload its own key
 * (or none, with `undefined`), so that a batch deduplicates item by item.
 * One string key for the whole batch lets only its first payload through.
 * @typeParam TInput The payload as it is enqueued.
 * @since 0.2.0
 */
export type TaskEnqueueManyOptions<TInput> =
  & Omit<TaskEnqueueCommonOptions, "deduplicationKey">
  & {
    /**
     * One key for every payload, or a function of each payload (and its
     * index) returning its key.  See
     * {@link TaskEnqueueCommonOptions.deduplicationKey}.
     */
    readonly deduplicationKey?: string | ((payload: TInput, index: number) => string | undefined);
  }
  & TaskEnqueueFlowOptions<TaskDebounceManyOptions<TInput>, TaskThrottleManyOptions<TInput>>;

/**
 * What enqueueing one task payload did: `"enqueued"` with the new
 * message's id, or `"deduplicated"` when a pending task with the same
 * deduplication key made it add nothing, `"debounced"` (since 0.4.0) for
 * an enqueue with `debounce`, or `"throttled"` (since 0.4.0) when
 * `throttle` made it add nothing.  `Context.enqueueTask()` resolves
 * to one; `Context.enqueueTaskMany()` to one per payload, in order.
 * @since 0.2.0
 */
export type TaskEnqueueResult =
  | {
    /** The task was enqueued. */
    readonly status: "enqueued";
    /** The id of the new message (`ctx.task.id` in the handler). */
    readonly messageId: string;
  }
  | {
    /** Nothing was enqueued: the key is held by a pending task. */
    readonly status: "deduplicated";
    /** The key that was held. */
    readonly deduplicationKey: string;
  }
  | {
    /**
     * The task was enqueued with `debounce`: it runs when it is due unless
     * a later enqueue with the key supersedes it first (then that one runs,
     * and this one is dropped without an attempt).
     * @since 0.4.0
     */
    readonly status: "debounced";
    /** The id of the new message. */
    readonly messageId: string;
    /** The debounce key. */
    readonly debounceKey: string;
    /** When the message is due, unless superseded. */
    readonly dueAt: Date;
  }
  | {
    /**
     * Nothing was enqueued: an enqueue with the key went through less than
     * `throttle.period` ago.
     * @since 0.4.0
     */
    readonly status: "throttled";
    /** The throttle key. */
    readonly throttleKey: string;
    /** When the key's period ends. */
    readonly until: Date;
  };

/**
 * A task as the registry keeps it: its handle and its options, with the
 * payload type erased.  Internal.
 * @since 0.1.0
 */
export interface RegisteredTask<TContextData, TContext = unknown> {
  /** The handle `defineTask()` returned; compared by identity. */
  readonly definition: TaskDefinition<TContextData, unknown, unknown>;
  /** The task's name. */
  readonly name: string;
  /** The payload's schema. */
  readonly schema: StandardSchemaV1;
  /** The task's handler. */
  readonly handler: (ctx: TContext, data: unknown) => unknown;
  /** The task's own retry policy, if any. */
  readonly retryPolicy?: RetryPolicy;
  /** The task's error hook, if any. */
  readonly onError?: (
    ctx: TContext,
    error: unknown,
    data: unknown,
  ) => Promise<void> | void;
  /** The task's own queue, if any. */
  readonly queue?: MessageQueue;
  /** The task's own lifecycle event listeners. */
  readonly on: TaskEventListeners;
  /**
   * The capabilities a worker needs, sorted and without duplicates; empty
   * when any worker may run the task.
   * @since 0.2.0
   */
  readonly capabilities: readonly string[];
  /**
   * The task's own time limit in milliseconds, `null` for none, or
   * `undefined` for the federation's `taskTimeout`.
   * @since 0.3.0
   */
  readonly timeoutMs?: number | null;
  /**
   * The task's own hand-out limit, or `undefined` for the federation's
   * `maxDeliveries`.
   * @since 0.4.0
   */
  readonly maxDeliveries?: number;
  /**
   * The priority of the task's messages when the enqueue gives none.
   * @since 0.3.0
   */
  readonly priority: number;
  /**
   * The largest result kept, in bytes.
   * @since 0.3.0
   */
  readonly maxResultBytes: number;
  /**
   * How long completed runs are kept, in milliseconds (0: none), or
   * `undefined` for the federation's `completedTaskRetention`.
   * @since 0.3.0
   */
  readonly completedRetentionMs?: number;
  /**
   * How long failed runs are kept, in milliseconds (0: none), or
   * `undefined` for the federation's `failedTaskRetention`.
   * @since 0.3.0
   */
  readonly failedRetentionMs?: number;
  /**
   * The task's checked `concurrency` option, if any.
   * @since 0.4.0
   */
  readonly concurrency?: ResolvedTaskConcurrency;
  /**
   * The task's checked `rateLimit` option, if any.
   * @since 0.4.0
   */
  readonly rateLimit?: ResolvedTaskRateLimit;
  /**
   * How a task whose handler gets many payloads per run collects them, or
   * `undefined` for one payload per run.
   * @since 0.4.0
   */
  readonly many?: HandleManySettings;
}

/**
 * Checks a task's name and options and builds its handle.
 * @param name The task's name: a non-empty string, case-sensitive.
 * @param options The task's options.
 * @returns The registered task, holding the new handle.
 * @throws {TaskDefinitionError} When the name or an option is invalid, or an
 *         option is unknown (with the nearest known name); the
 *         message names the task and the option.
 * @since 0.1.0
 */
export function createTaskDefinition<TContextData, TContext, TSchema extends StandardSchemaV1>(
  name: string,
  options: TaskOptions<TContext, TSchema> | TaskManyOptions<TContext, TSchema>,
): RegisteredTask<TContextData, TContext> {
  if (typeof name !== "string" || name === "") {
    throw new TaskDefinitionError(
      String(name),
      "name",
      `A task name must be a non-empty string; got ${describe(name)}.`,
    );
  }
  const task = JSON.stringify(name);
  if (options == null || typeof options !== "object") {
    throw new TaskDefinitionError(
      name,
      "options",
      `The options of the task ${task} must be an object with at least schema and handler.`,
    );
  }
  const unknown = findUnknownOption(options, TASK_OPTION_NAMES);
  if (unknown !== undefined) {
    throw new TaskDefinitionError(
      name,
      unknown,
      unknownOptionMessage(unknown, TASK_OPTION_NAMES, { where: `the task ${task}` }),
    );
  }
  const schema: unknown = options.schema;
  if (schema == null) {
    throw new TaskDefinitionError(
      name,
      "schema",
      `The schema option of the task ${task} is required: pass a Standard Schema ` +
        "(Zod, Valibot, ArkType, …) that describes the payload.",
    );
  }
  if (!isStandardSchema(schema)) {
    throw new TaskDefinitionError(
      name,
      "schema",
      `The schema option of the task ${task} must be a Standard Schema (version 1, with a ` +
        `"~standard".validate function); got ${describe(schema)}.`,
    );
  }
  if (typeof options.handler !== "function") {
    throw new TaskDefinitionError(
      name,
      "handler",
      `The handler option of the task ${task} must be a function; got ` +
        `${describe(options.handler)}.`,
    );
  }
  if (options.retryPolicy != null && typeof options.retryPolicy !== "function") {
    throw new TaskDefinitionError(
      name,
      "retryPolicy",
      `The retryPolicy option of the task ${task} must be a function (a RetryPolicy such ` +
        `as createExponentialBackoffPolicy() returns); got ${describe(options.retryPolicy)}.`,
    );
  }
  if (options.onError != null && typeof options.onError !== "function") {
    throw new TaskDefinitionError(
      name,
      "onError",
      `The onError option of the task ${task} must be a function; got ` +
        `${describe(options.onError)}.`,
    );
  }
  const queue: unknown = options.queue;
  if (queue != null && !isMessageQueue(queue)) {
    throw new TaskDefinitionError(
      name,
      "queue",
      `The queue option of the task ${task} must be a MessageQueue (an object with ` +
        `enqueue() and listen() methods); got ${describe(queue)}.`,
    );
  }
  const on: unknown = options.on ?? {};
  if (typeof on !== "object" || on === null) {
    throw new TaskDefinitionError(
      name,
      "on",
      `The on option of the task ${task} must be an object of event listeners; got ` +
        `${describe(on)}.`,
    );
  }
  for (const [type, listener] of Object.entries(on)) {
    if (!EVENT_TYPES.includes(type as MessageEventType)) {
      throw new TaskDefinitionError(
        name,
        "on",
        `The on option of the task ${task} has a listener for ${JSON.stringify(type)}, which ` +
          `is not an event; the events are ${EVENT_TYPES.join(", ")}.`,
      );
    }
    if (typeof listener !== "function") {
      throw new TaskDefinitionError(
        name,
        "on",
        `The on.${type} listener of the task ${task} must be a function; got ` +
          `${describe(listener)}.`,
      );
    }
  }
  const many = checkHandleMany(name, options.handleMany);
  const capabilities = checkCapabilities(name, options.capabilities);
  const timeoutMs = checkTimeout(name, options.timeout);
  const maxDeliveries = checkMaxDeliveries(name, options.maxDeliveries);
  const concurrency = checkTaskConcurrency(name, options.concurrency);
  const rateLimit = checkTaskRateLimit(name, options.rateLimit);
  let priority: number;
  try {
    priority = checkMessagePriority(options.priority);
  } catch (error) {
    throw new TaskDefinitionError(
      name,
      "priority",
      `The task ${task} has an invalid priority: ${(error as Error).message}`,
    );
  }
  const definition: TaskDefinition<TContextData, unknown, unknown> = Object.freeze({
    name,
    schema,
  });
  return {
    definition,
    name,
    schema,
    handler: options.handler as RegisteredTask<TContextData, TContext>["handler"],
    retryPolicy: options.retryPolicy,
    onError: options.onError as RegisteredTask<TContextData, TContext>["onError"],
    queue: options.queue,
    on: { ...on as TaskEventListeners },
    capabilities,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(maxDeliveries === undefined ? {} : { maxDeliveries }),
    priority,
    maxResultBytes: checkMaxResultBytes(name, options.maxResultBytes),
    ...retention(name, "completedRetention", options.completedRetention),
    ...retention(name, "failedRetention", options.failedRetention),
    ...(concurrency === undefined ? {} : { concurrency }),
    ...(rateLimit === undefined ? {} : { rateLimit }),

    ...(many === undefined ? {} : { many }),
  };
}

/** Checks a task's retention option; `{}` when it is not given. */
function retention(
  name: string,
  option: "completedRetention" | "failedRetention",
  value: unknown,
): { completedRetentionMs?: number; failedRetentionMs?: number } {
  if (value == null) return {};
  let ms: number;
  try {
    ms = value === 0 ? 0 : durationToMilliseconds(value as DurationInput, option);
  } catch (error) {
    throw new TaskDefinitionError(
      name,
      option,
      `The ${option} option of the task ${JSON.stringify(name)} must be a duration such as ` +
        `{ days: 7 }, or 0 to keep none: ${(error as Error).message}`,
    );
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw new TaskDefinitionError(
      name,
      option,
      `The ${option} option of the task ${JSON.stringify(name)} must be a finite duration ` +
        `of zero or more.`,
    );
  }
  return option === "completedRetention" ? { completedRetentionMs: ms } : { failedRetentionMs: ms };
}

function checkMaxResultBytes(name: string, value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_TASK_RESULT_BYTES;
  if (
    typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 ||
    value > MAX_TASK_RESULT_BYTES_LIMIT
  ) {
    throw new TaskDefinitionError(
      name,
      "maxResultBytes",
      `The maxResultBytes option of the task ${JSON.stringify(name)} must be an integer ` +
        `from 0 to ${MAX_TASK_RESULT_BYTES_LIMIT}; got ${describe(value)}.`,
    );
  }
  return value;
}

function checkMaxDeliveries(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  try {
    return resolveMaxDeliveries(value);
  } catch (error) {
    throw new TaskDefinitionError(
      name,
      "maxDeliveries",
      `The task ${JSON.stringify(name)} has an invalid maxDeliveries: ${(error as Error).message}`,
    );
  }
}

function checkTimeout(name: string, timeout: unknown): number | null | undefined {
  if (timeout === undefined) return undefined;
  try {
    return timeLimitToMilliseconds(timeout as DurationInput | null, "timeout");
  } catch (error) {
    throw new TaskDefinitionError(
      name,
      "timeout",
      `The task ${JSON.stringify(name)} has an invalid time limit: ${(error as Error).message}`,
    );
  }
}

/**
 * Checks the `capabilities` option of `enqueueTask()`.  Internal.
 * @param capabilities The option's value.
 * @param where The method, e.g. `"enqueueTask()"`.
 * @returns The capabilities, sorted and without duplicates.
 * @throws {TypeError} When it is not an array of non-empty strings of at
 *         most 64 characters; the message names the option.
 * @since 0.3.0
 */
export function checkEnqueueCapabilities(capabilities: unknown, where: string): readonly string[] {
  if (capabilities == null) return [];
  if (
    !Array.isArray(capabilities) ||
    !capabilities.every((c) => typeof c === "string" && c !== "" && c.length <= 64)
  ) {
    throw new TypeError(
      `The capabilities option of ${where} must be an array of non-empty strings of at most ` +
        `64 characters, e.g. ["gpu"]; got ${describe(capabilities)}.`,
    );
  }
  return [...new Set(capabilities as string[])].sort();
}

function checkCapabilities(name: string, capabilities: unknown): readonly string[] {
  if (capabilities == null) return [];
  if (!Array.isArray(capabilities)) {
    throw new TaskDefinitionError(
      name,
      "capabilities",
      `The capabilities option of the task ${JSON.stringify(name)} must be an array of ` +
        `strings, e.g. ["gpu"]; got ${describe(capabilities)}.`,
    );
  }
  for (const capability of capabilities) {
    if (typeof capability !== "string" || capability === "" || capability.length > 64) {
      throw new TaskDefinitionError(
        name,
        "capabilities",
        `Each entry of the capabilities option of the task ${JSON.stringify(name)} must be ` +
          `a non-empty string of at most 64 characters; got ${describe(capability)}.`,
      );
    }
  }
  return Object.freeze([...new Set(capabilities as string[])].sort());
}

/**
 * Tells whether a value is a Standard Schema (version 1).
 * @param value The value.
 * @returns `true` if it has a `"~standard"` property of version 1 with a
 *          `validate` function.
 * @since 0.1.0
 */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if (value == null || (typeof value !== "object" && typeof value !== "function")) return false;
  const props = (value as Partial<StandardSchemaV1>)["~standard"];
  return props != null && typeof props === "object" && props.version === 1 &&
    typeof props.validate === "function";
}

function isMessageQueue(value: unknown): value is MessageQueue {
  if (value == null || typeof value !== "object") return false;
  const queue = value as Partial<MessageQueue>;
  return typeof queue.enqueue === "function" && typeof queue.listen === "function";
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value !== "object") return `${typeof value} ${String(value)}`;
  const className = (value as { constructor?: { name?: string } }).constructor?.name;
  return className == null || className === "Object" ? "an object" : `a ${className}`;
}
