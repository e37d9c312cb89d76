/**
 * The largest progress `data` accepted, in bytes of its JSON text (UTF-8).
 * Progress travels through the pub/sub transport (PostgreSQL `NOTIFY`
 * payloads are limited to 8000 bytes) and is stored with the task's
 * status, so it is for a step name or a counter, not for results.
 * @since 0.2.0
 */
export const MAX_TASK_PROGRESS_DATA_BYTES = 4096;

/**
 * What a task handler passes to `ctx.task.reportProgress()`: a percentage
 * from 0 to 100, or an object with an optional `percent` and an optional
 * JSON-compatible `data` (at most {@link MAX_TASK_PROGRESS_DATA_BYTES}
 * bytes as JSON).
 * @since 0.2.0
 */
export type TaskProgressInput =
  | number
  | {
    /** How far the task is, from 0 to 100. */
    readonly percent?: number;
    /** Anything JSON-compatible and small: a step name, counters… */
    readonly data?: unknown;
  };

/**
 * Thrown by `ctx.task.reportProgress()` when the progress is malformed: a
 * percentage that is not a finite number from 0 to 100, data that is not
 * JSON-compatible or larger than {@link MAX_TASK_PROGRESS_DATA_BYTES}.
 * Nothing is reported then.
 * @since 0.2.0
 */
export class TaskProgressError extends TypeError {
  /**
   * @param message What is wrong.
   */
  constructor(message: string) {
    super(message);
    this.name = "TaskProgressError";
  }
}

/**
 * Checks a progress report and returns its normal form.
 * @param input What the handler passed.
 * @returns The percent and data, `data` as its JSON text.
 * @throws {TaskProgressError} When the progress is malformed.
 * @since 0.2.0
 */
export function normalizeTaskProgress(
  input: TaskProgressInput,
): { readonly percent?: number; readonly data?: unknown } {
  if (typeof input === "number") return { percent: checkPercent(input) };
  if (input == null || typeof input !== "object" || Array.isArray(input)) {
    throw new TaskProgressError(
      "reportProgress() takes a percentage (a number from 0 to 100) or an object " +
        `{ percent?, data? }; got ${describe(input)}.`,
    );
  }
  for (const key of Object.keys(input)) {
    if (key !== "percent" && key !== "data") {
      throw new TaskProgressError(
        `reportProgress() got an unknown property ${JSON.stringify(key)}; the progress ` +
          "object has percent and data.",
      );
    }
  }
  if (input.percent === undefined && input.data === undefined) {
    throw new TaskProgressError("reportProgress() needs a percent, data, or both.");
  }
  const percent = input.percent === undefined ? undefined : checkPercent(input.percent);
  if (input.data === undefined) return { percent };
  checkJson(input.data, "data", new Set());
  const json = JSON.stringify(input.data);
  const bytes = new TextEncoder().encode(json).length;
  if (bytes > MAX_TASK_PROGRESS_DATA_BYTES) {
    throw new TaskProgressError(
      `The progress data is ${bytes} bytes as JSON; at most ${MAX_TASK_PROGRESS_DATA_BYTES} ` +
        "are allowed.  Report a step or a counter, and store results elsewhere.",
    );
  }
  // A copy, so that the handler may go on changing its own object.
  return percent === undefined ? { data: JSON.parse(json) } : { percent, data: JSON.parse(json) };
}

function checkPercent(percent: unknown): number {
  if (typeof percent !== "number" || !Number.isFinite(percent) || percent < 0 || percent > 100) {
    throw new TaskProgressError(
      `The progress percent must be a finite number from 0 to 100; got ${describe(percent)}.`,
    );
  }
  return percent;
}

function checkJson(value: unknown, path: string, seen: Set<object>): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return;
    throw new TaskProgressError(`The progress ${path} is ${value}, which JSON cannot hold.`);
  }
  if (typeof value !== "object") {
    throw new TaskProgressError(
      `The progress ${path} must be JSON-compatible; got ${describe(value)}.`,
    );
  }
  if (seen.has(value)) {
    throw new TaskProgressError(`The progress ${path} refers to itself; JSON cannot hold it.`);
  }
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
    throw new TaskProgressError(
      `The progress ${path} must hold plain objects, arrays and primitives; got ` +
        `${describe(value)}.`,
    );
  }
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkJson(item, `${path}[${i}]`, seen));
  } else {
    for (const [key, item] of Object.entries(value)) checkJson(item, `${path}.${key}`, seen);
  }
  seen.delete(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value !== "object") return `a ${typeof value}`;
  const name = (value as { constructor?: { name?: string } }).constructor?.name;
  return name == null || name === "Object" ? "an object" : `a ${name}`;
}
