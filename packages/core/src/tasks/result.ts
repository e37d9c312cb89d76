// A task handler's return value: checked and size-limited once, on the
// worker, then kept with the completed status record, sent to watchers and
// put in the `completed` webhook payload.
import type { TaskMessage } from "./message.ts";

/**
 * What a task handler may return as its result: JSON-compatible values
 * (plain objects, arrays, strings, finite numbers, booleans, `null`), or
 * nothing (`void`/`undefined`) for no result.
 * @since 0.3.0
 */
export type TaskResultValue =
  | string
  | number
  | boolean
  | null
  | readonly TaskResultValue[]
  | { readonly [key: string]: TaskResultValue | undefined };

/**
 * The largest result kept by default, in bytes of its JSON text (UTF-8):
 * the size of progress data, so that a `completed` update, which carries
 * both, fits the PostgreSQL pub/sub transport's 8000-byte payloads.
 * A task's `maxResultBytes` changes it.
 * @since 0.3.0
 */
export const DEFAULT_MAX_TASK_RESULT_BYTES = 4096;

/**
 * The largest `maxResultBytes` a task may set: 1 MiB.  Results are stored
 * in the key–value store with the task's status record.
 * @since 0.3.0
 */
export const MAX_TASK_RESULT_BYTES_LIMIT = 1024 * 1024;

/**
 * What a status record holds instead of a result that could not be kept:
 * the task still completed.
 * @since 0.3.0
 */
export interface TaskResultOmission {
  /**
   * `"too-large"` when the result's JSON text was over the limit,
   * `"not-json"` when it was not JSON-compatible.
   */
  readonly reason: "too-large" | "not-json";
  /** What was wrong, in words. */
  readonly message: string;
  /** The size of the result's JSON text, for `"too-large"`. */
  readonly bytes?: number;
  /** The limit in force, in bytes. */
  readonly limit: number;
}

/**
 * A handler's result, checked: the value to keep (a copy), or why it was
 * left out.
 * @since 0.3.0
 */
export type CheckedTaskResult =
  | { readonly result: unknown; readonly omitted?: undefined }
  | { readonly result?: undefined; readonly omitted: TaskResultOmission };

/**
 * Checks a handler's return value.
 * @param value What the handler returned (not `undefined`).
 * @param limit The largest JSON text kept, in bytes.
 * @returns A copy of the value, or why it is left out.
 * @since 0.3.0
 */
export function checkTaskResult(value: unknown, limit: number): CheckedTaskResult {
  const problem = findNonJson(value, "the result", new Set());
  if (problem != null) {
    return { omitted: { reason: "not-json", message: problem, limit } };
  }
  const json = JSON.stringify(value);
  const bytes = new TextEncoder().encode(json).length;
  if (bytes > limit) {
    return {
      omitted: {
        reason: "too-large",
        message: `The result is ${bytes} bytes as JSON; at most ${limit} are kept (the task's ` +
          "maxResultBytes).  Store large results elsewhere and return a reference.",
        bytes,
        limit,
      },
    };
  }
  return { result: JSON.parse(json) };
}

/** Why a value is not JSON-compatible, or `undefined` when it is. */
function findNonJson(value: unknown, path: string, seen: Set<object>): string | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    return Number.isFinite(value) ? undefined : `${path} is ${value}, which JSON cannot hold.`;
  }
  if (typeof value !== "object") return `${path} is a ${typeof value}, which JSON cannot hold.`;
  if (seen.has(value)) return `${path} refers to itself, which JSON cannot hold.`;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    const name = (value as { constructor?: { name?: string } }).constructor?.name ?? "object";
    return `${path} is a ${name}; only plain objects, arrays and primitives are kept.`;
  }
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const problem = findNonJson(value[i], `${path}[${i}]`, seen);
        if (problem != null) return problem;
      }
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      // JSON.stringify leaves undefined properties out, as a result may.
      if (item === undefined) continue;
      const problem = findNonJson(item, `${path}.${key}`, seen);
      if (problem != null) return problem;
    }
  } finally {
    seen.delete(value);
  }
}

// The handler runs inside the dispatcher, which then tells its observers
// (the status records, the webhooks) how the message ended, passing them
// the same message object: the checked result travels from one to the
// others on it, without a field on every lifecycle event.
const results = new WeakMap<TaskMessage, CheckedTaskResult>();

/**
 * Keeps a handler's checked result for the observers of its message.
 * Internal.
 * @param message The message the handler ran for.
 * @param result The checked result.
 * @since 0.3.0
 */
export function setTaskResult(message: TaskMessage, result: CheckedTaskResult): void {
  results.set(message, result);
}

/**
 * The checked result of the handler that ran for a message, if it returned
 * one.  Internal.
 * @param message The message, as the dispatcher's observers get it.
 * @returns The checked result, or `undefined`.
 * @since 0.3.0
 */
export function taskResultOf(message: object): CheckedTaskResult | undefined {
  return results.get(message as TaskMessage);
}
