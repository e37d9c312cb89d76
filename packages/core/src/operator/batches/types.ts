// The public shapes of task batches: what enqueueBatch() takes and returns,
// what a batch's status says, and what its completion task receives.
import type { TaskDefinition, TaskEnqueueCommonOptions } from "../../tasks/definition.ts";

/**
 * One member of a batch: a task and its payload, as `enqueueTask()` takes
 * them.
 * @typeParam TContextData The type of the application data in contexts.
 * @since 0.3.0
 */
export interface BatchMember<TContextData> {
  /** The task's handle, as `defineTask()` returned it. */
  // deno-lint-ignore no-explicit-any
  readonly task: TaskDefinition<TContextData, any, any, any>;
  /** The payload (the schema's input type). */
  readonly data: unknown;
  /**
   * `enqueueTask()`'s options, except `deduplicationKey`, `debounce` and
   * `throttle`: a member they turned into a no-op would never finish.
   * None by default.
   */
  readonly options?: Omit<TaskEnqueueCommonOptions, "deduplicationKey">;
}

/**
 * What a batch's completion task receives as its payload, once every
 * member has completed or failed for good: the counts, the ids of the
 * members that did not complete, and the `data` given to
 * `enqueueBatch()`.  Define the completion task with a schema that accepts
 * this shape.
 * @typeParam TData The `data` given to `enqueueBatch()`.
 * @since 0.3.0
 */
export interface BatchCompletion<TData = unknown> {
  /** The batch's id. */
  readonly batchId: string;
  /** How many members the batch had in the end (those added included). */
  readonly total: number;
  /** How many completed. */
  readonly completed: number;
  /** How many failed for good, were dropped or were cancelled. */
  readonly failed: number;
  /** The task ids of the members counted in `failed`. */
  readonly failedIds: readonly string[];
  /** The `data` given to `enqueueBatch()`. */
  readonly data: TData;
}

/**
 * Options for `Context.enqueueBatch()`.
 * @typeParam TContextData The type of the application data in contexts.
 * @typeParam TData The type of `data`.
 * @since 0.3.0
 */
export interface EnqueueBatchOptions<TContextData, TData> {
  /**
   * The task to enqueue, exactly once, when every member has completed or
   * failed for good; its payload is a {@link BatchCompletion}.
   */
  // deno-lint-ignore no-explicit-any
  readonly onComplete: TaskDefinition<TContextData, any, BatchCompletion<TData>, any>;
  /**
   * JSON-compatible data handed to `onComplete` with the counts (kept in
   * the key–value store until then).  `null` by default.
   */
  readonly data?: TData;
}

/**
 * What `Context.enqueueBatch()` and `TaskContext.addToBatch()` return.
 * @since 0.3.0
 */
export interface BatchEnqueueResult {
  /** The batch's id, for `getBatchStatus()` and `watchBatch()`. */
  readonly batchId: string;
  /** The task ids of the members enqueued by this call, in order. */
  readonly memberIds: readonly string[];
}

/**
 * Where a batch is: `"running"` while some member is not done;
 * `"completing"` once all are and the completion task is enqueued;
 * `"completed"` once the completion task has started.
 * @since 0.3.0
 */
export type BatchState = "running" | "completing" | "completed";

/**
 * A batch's progress, as `getBatchStatus()` and `watchBatch()` report it.
 * @since 0.3.0
 */
export interface BatchStatus {
  /** The batch's id. */
  readonly id: string;
  /** Where the batch is. */
  readonly state: BatchState;
  /** How many members it has so far. */
  readonly total: number;
  /** How many members completed. */
  readonly completed: number;
  /** How many members failed for good, were dropped or were cancelled. */
  readonly failed: number;
  /** How many members are not done yet. */
  readonly pending: number;
  /** The share of members done, from 0 to 1 (1 for an empty batch). */
  readonly progress: number;
  /** The task ids of the members counted in `failed`. */
  readonly failedIds: readonly string[];
  /** The completion task's name. */
  readonly onComplete: string;
  /** The completion task's id, once it has started. */
  readonly completionTaskId?: string;
  /** When the batch was created. */
  readonly createdAt: Date;
  /** When the batch's record last changed. */
  readonly updatedAt: Date;
}

/**
 * Options for `watchBatch()`.
 * @since 0.3.0
 */
export interface WatchBatchOptions {
  /** Ends the iteration when it aborts. */
  readonly signal?: AbortSignal;
}

/**
 * Batch status for the federation: `getBatchStatus()` and `watchBatch()`.
 * `Federation` has these methods.
 * @since 0.3.0
 */
export interface BatchStatusOperations {
  /**
   * Reads a batch's progress from the key–value store.
   * @param id The batch's id (`enqueueBatch()`'s `batchId`).
   * @returns The status, or `undefined` when there is no such batch (or
   *          its record expired, a day after its completion task started).
   * @example
   * ```ts ignore
   * const { batchId } = await ctx.enqueueBatch(members, { onComplete: importDone });
   * const status = await federation.getBatchStatus(batchId);
   * console.log(status?.progress);
   * ```
   */
  getBatchStatus(id: string): Promise<BatchStatus | undefined>;

  /**
   * Watches a batch: yields its status now and at each change, from any
   * process sharing the federation's `pubsub` (and, in case pub/sub lost
   * an update, after each second without one); ends once the batch is
   * `"completed"`, when it does not exist, or when `options.signal`
   * aborts.
   * @param id The batch's id.
   * @param options The signal that stops watching.
   * @returns The statuses.
   * @example
   * ```ts ignore
   * for await (const status of federation.watchBatch(batchId)) {
   *   console.log(`${Math.round(status.progress * 100)}%`);
   * }
   * ```
   */
  watchBatch(id: string, options?: WatchBatchOptions): AsyncIterable<BatchStatus>;
}
