import { assertKnownOptions } from "../options/known-options.ts";
import { type DurationInput, durationToMilliseconds } from "../time/duration.ts";
import { TaskDefinitionError } from "./errors.ts";

/** The largest `handleMany.size`: a run holds every item's payload at once. */
export const MAX_HANDLE_MANY_SIZE = 1000;
/** The longest `handleMany.wait`, in milliseconds (one minute). */
export const MAX_HANDLE_MANY_WAIT_MS = 60_000;
/** How long a worker waits for more items when `handleMany.wait` is not given. */
export const DEFAULT_HANDLE_MANY_WAIT_MS = 10;

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
