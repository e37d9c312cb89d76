import type { StandardSchemaV1 } from "@standard-schema/spec";
import { assertKnownOptions } from "../options/known-options.ts";
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";
import type { TaskOptions } from "./definition.ts";
import { TaskDefinitionError } from "./errors.ts";
import type { TaskResultValue } from "./result.ts";

/** The largest `handleMany.size`: a run holds every item's payload at once. */
export const MAX_HANDLE_MANY_SIZE = 1000;
/** The longest `handleMany.wait`, in milliseconds (one minute). */
export const MAX_HANDLE_MANY_WAIT_MS = 60_000;
/** How long a worker waits for more items when `handleMany.wait` is not given. */
export const DEFAULT_HANDLE_MANY_WAIT_MS = 10;

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
   * Aborted when the item is cancelled (`cancelTask()`), when its time
   * limit passes, or when the worker shuts down.
   */
  readonly signal: AbortSignal;
}

/**
 * What a `handleMany` handler puts in its returned array for an item that
 * failed: that item alone fails (its retry policy decides whether it is
 * retried; a `PermanentError` fails it for good), while the others
 * complete.
 * @example
 * ```ts
 * import { TaskItemFailure } from "@fedwork/core";
 *
 * declare const items: readonly { readonly data: string }[];
 * declare function send(text: string): Promise<boolean>;
 *
 * const outcomes = await Promise.all(items.map(async (item) =>
 *   await send(item.data) ? undefined : new TaskItemFailure(new Error("not sent"))
 * ));
 * ```
 * @since 0.4.0
 */
export class TaskItemFailure {
  /** The item's error: what its attempt failed with. */
  readonly error: unknown;

  /**
   * @param error What the item's attempt failed with.
   */
  constructor(error: unknown) {
    this.error = error;
  }
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
   * policy on its own; returning an array with a {@link TaskItemFailure}
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
   * {@link TaskItemFailure}.
   */
  readonly onError?: (
    ctx: TContext,
    error: unknown,
    items: readonly TaskItem<StandardSchemaV1.InferOutput<TSchema>>[],
  ) => Promise<void> | void;
}

/**
 * The checked `handleMany` option of a task.  Internal.
 * @since 0.4.0
 */
export interface HandleManySettings {
  /** The most items a run gets. */
  readonly size: number;
  /** How long to wait for more, in milliseconds. */
  readonly waitMs: number;
}

/**
 * Checks a task's `handleMany` option.  Internal.
 * @param name The task's name.
 * @param value The option's value.
 * @returns The settings, or `undefined` when the option is not given.
 * @throws {TaskDefinitionError} When it is not an object with a `size`
 *         from 1 to 1,000 and a `wait` from 0 to one minute, or has
 *         another field.
 * @since 0.4.0
 */
export function checkHandleMany(name: string, value: unknown): HandleManySettings | undefined {
  if (value === undefined) return undefined;
  const task = JSON.stringify(name);
  if (value === null || typeof value !== "object") {
    throw new TaskDefinitionError(
      name,
      "handleMany",
      `The handleMany option of the task ${task} must be an object such as ` +
        `{ size: 50, wait: { milliseconds: 20 } }.`,
    );
  }
  try {
    assertKnownOptions(value, ["size", "wait"], {
      where: `the handleMany option of the task ${task}`,
    });
  } catch (error) {
    throw new TaskDefinitionError(name, "handleMany", (error as Error).message);
  }
  const { size, wait } = value as { size?: unknown; wait?: unknown };
  if (
    typeof size !== "number" || !Number.isInteger(size) || size < 1 || size > MAX_HANDLE_MANY_SIZE
  ) {
    throw new TaskDefinitionError(
      name,
      "handleMany",
      `The handleMany.size option of the task ${task} must be an integer from 1 to ` +
        `${MAX_HANDLE_MANY_SIZE}; got ${typeof size === "number" ? size : typeof size}.`,
    );
  }
  let waitMs = DEFAULT_HANDLE_MANY_WAIT_MS;
  if (wait !== undefined) {
    try {
      waitMs = durationToMilliseconds(wait as DurationInput, "handleMany.wait");
    } catch (error) {
      throw new TaskDefinitionError(
        name,
        "handleMany",
        `The handleMany.wait option of the task ${task} must be a duration such as ` +
          `{ milliseconds: 20 }: ${(error as Error).message}`,
      );
    }
    if (!Number.isFinite(waitMs) || waitMs < 0 || waitMs > MAX_HANDLE_MANY_WAIT_MS) {
      throw new TaskDefinitionError(
        name,
        "handleMany",
        `The handleMany.wait option of the task ${task} must be from 0 to one minute; got ` +
          `${waitMs} ms.`,
      );
    }
  }
  return Object.freeze({ size, waitMs });
}
