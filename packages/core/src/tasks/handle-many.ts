// The types of tasks whose handler gets many payloads per run
// (`handleMany`); interfaces only, so that definition.ts can use them.
import type { DurationInput } from "../time/duration.ts";
import type { TaskItemFailure } from "./item-failure.ts";

/**
 * How a task that handles many payloads per run collects them: the
 * `handleMany` option of `defineTask()`.
 * @since 0.4.0
 */
export interface TaskHandleManyOptions {
  /**
   * The most items one run of the handler gets: an integer from 1 to
   * 1,000.  A worker runs the handler as soon as it holds this many
   * messages of the task.  Required.
   */
  readonly size: number;
  /**
   * How long a worker holding fewer than `size` items of the task waits
   * for more before it runs the handler with those it has, counted from
   * the first one: a duration from 0 to one minute.
   * @default `{ milliseconds: 10 }`
   */
  readonly wait?: DurationInput;
}

/**
 * One payload of a run of a task defined with `handleMany`: what a plain
 * task's handler gets as `data` and in `ctx.task`, per item.
 * @typeParam TData The payload type, as the schema outputs it.
 * @since 0.4.0
 */
export interface TaskItem<TData> {
  /** The payload, as the schema outputs it. */
  readonly data: TData;
  /** The id of the item's message (what `enqueueTask()` returned). */
  readonly id: string;
  /** The item's attempt, from 0. */
  readonly attempt: number;
  /** When the item was first enqueued. */
  readonly enqueuedAt: Date;
  /**
   * Aborted when the item is cancelled (`cancelTask()`) or when the worker
   * shuts down.  The time limit is the run's (`ctx.task.signal`): an item
   * has none of its own.
   */
  readonly signal: AbortSignal;
}

/**
 * What a `handleMany` handler may return: nothing when every item
 * completed, or one entry per item, in the order of the items: a
 * {@link TaskItemFailure} for an item that failed, otherwise the item's
 * result (`undefined` for none).
 * @typeParam TResult The result type of one item.
 * @since 0.4.0
 */
export type TaskItemResults<TResult> = readonly (TResult | TaskItemFailure | undefined)[];
