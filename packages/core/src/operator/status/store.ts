import { readTaskStepsStatus } from "../../tasks/steps/status.ts";
import type { TaskStepsStatus } from "../../tasks/steps/types.ts";
import type { KvKey, KvStore, KvStoreSetManyEntry, KvStoreSetOptions } from "../../kv/kv-store.ts";
import {
  isInMemoryKvStore,
  type MemoryKvStore,
  writeInMemoryNow,
} from "../../kv/memory-kv-store.ts";
import { MicrotaskBatcher } from "../../kv/microtask-batcher.ts";
import { toTemporalDuration } from "../../time/duration.ts";
import type { TaskResultOmission } from "../../tasks/result.ts";
import { type ErrorDescription, readErrorDescription } from "../../processing/error-description.ts";

/**
 * Where a task is: `queued` (enqueued, not yet taken), `running`,
 * `retrying` (an attempt failed and another is scheduled), `completed`,
 * `failed` (for good), `dropped` (cannot be processed) or `cancelled`
 * (by `cancelTask()`, since 0.3.0).  The last four are terminal.
 * @since 0.2.0
 */
export type TaskState =
  | "queued"
  | "running"
  | "retrying"
  | "completed"
  | "failed"
  | "dropped"
  | "cancelled";

/**
 * The states after which nothing more happens to a task.
 * @since 0.2.0
 */
export const TERMINAL_TASK_STATES: readonly TaskState[] = [
  "completed",
  "failed",
  "dropped",
  "cancelled",
];

/**
 * Tells whether a state is terminal.
 * @param state The state.
 * @returns `true` for `completed`, `failed`, `dropped` and `cancelled`.
 * @since 0.2.0
 */
export function isTerminalTaskState(state: TaskState): boolean {
  return state === "completed" || state === "failed" || state === "dropped" ||
    state === "cancelled";
}

/**
 * The last progress a task reported.
 * @since 0.2.0
 */
export interface TaskProgress {
  /** How far the task was, from 0 to 100, if it said. */
  readonly percent?: number;
  /** The JSON-compatible data it reported, if any. */
  readonly data?: unknown;
  /** When it reported it. */
  readonly at: Date;
}

/**
 * A task's status record, as `federation.getTaskStatus()` returns it.
 * @typeParam TResult The type of the handler's result (since 0.3.0).
 * @since 0.2.0
 */
export interface TaskStatus<TResult = unknown> {
  /** The task's message id (`enqueueTask()`'s `messageId`, `ctx.task.id`). */
  readonly id: string;
  /** The task's name. */
  readonly name: string;
  /** Where it is. */
  readonly state: TaskState;
  /** The attempt that runs or ran last, from 0. */
  readonly attempt: number;
  /** The last progress reported, kept across attempts and states. */
  readonly progress?: TaskProgress;
  /**
   * The last error, for `retrying`, `failed` and `dropped` (when an error
   * caused the drop): its name and message, the shape of a task record's
   * error and of a webhook's, without the stack.  A string
   * (`"Name: message"`) before 0.4.0; such records read as this shape.
   */
  readonly error?: ErrorDescription;
  /**
   * What the handler returned, for `completed` (a JSON copy); absent when
   * it returned nothing or its result was not kept.
   * @since 0.3.0
   */
  readonly result?: TResult;
  /**
   * Why the handler's result was not kept, for `completed`: over the
   * task's `maxResultBytes`, or not JSON-compatible.  The task completed
   * all the same.
   * @since 0.3.0
   */
  readonly resultOmitted?: TaskResultOmission;
  /**
   * The reason given to `cancelTask()`, for `cancelled`, if one was given;
   * why the task was dropped, for `dropped` (since 0.4.0; before, the
   * reason was the record's `error`).
   * @since 0.3.0
   */
  readonly reason?: string;
  /**
   * The id of the worker that runs or ran the attempt (`WorkerInfo.id`),
   * from `running` on; absent while `queued`, and in records written by
   * Fedwork older than 0.4.0.
   * @since 0.4.0
   */
  readonly workerId?: string;
  /**
   * The id of that worker's machine (`WorkerInfo.machineId`), whenever
   * `workerId` is there.
   * @since 0.4.0
   */
  readonly machineId?: string;
  /**
   * For a task with durable steps (`ctx.step`): the step it is at and the
   * ones recorded, kept across attempts and states like `progress`.
   * @since 0.4.0
   */
  readonly steps?: TaskStepsStatus;
  /** When the record last changed. */
  readonly updatedAt: Date;
}

/**
 * One change of a task, as `watchTask()` and `watchTasks()` yield it:
 * `kind` says whether its state or its progress changed.
 * @typeParam TResult The type of the handler's result (since 0.3.0).
 * @since 0.2.0
 */
export interface TaskUpdate<TResult = unknown> {
  /** The task's id. */
  readonly id: string;
  /** The status after the change. */
  readonly status: TaskStatus<TResult>;
  /**
   * `"state"` for a change of state, `"progress"` for a progress report,
   * `"step"` (since 0.4.0) for a durable step that starts, sleeps or waits.
   */
  readonly kind: "state" | "progress" | "step";
}

/** A {@link TaskStatus} as stored and sent: dates as ISO strings. */
interface StoredTaskStatus {
  readonly id: string;
  readonly name: string;
  readonly state: TaskState;
  readonly attempt: number;
  readonly progress?: { readonly percent?: number; readonly data?: unknown; readonly at: string };
  readonly error?: ErrorDescription;
  readonly result?: unknown;
  readonly resultOmitted?: TaskResultOmission;
  readonly reason?: string;
  readonly workerId?: string;
  readonly machineId?: string;
  readonly steps?: TaskStepsStatus;
  readonly updatedAt: string;
}

const STATES: readonly string[] = [
  "queued",
  "running",
  "retrying",
  "completed",
  "failed",
  "dropped",
  "cancelled",
];

/** The last timestamp {@link isoTimestamp} formatted, and its text. */
let lastTimestamp = NaN;
let lastIso = "";

/**
 * `date.toISOString()`, remembering the last one: the tasks that finish
 * within one millisecond (dozens, on a busy worker) share their records'
 * `updatedAt`, and formatting a date costs more than the rest of the
 * record's conversion.
 */
function isoTimestamp(date: Date): string {
  const time = date.getTime();
  if (time !== lastTimestamp) {
    lastIso = date.toISOString();
    lastTimestamp = time;
  }
  return lastIso;
}

function toStored(status: TaskStatus): StoredTaskStatus {
  // Field by field rather than with spreads: this runs for every record
  // of every task, and each spread of an optional field built an object.
  const stored: { -readonly [K in keyof StoredTaskStatus]: StoredTaskStatus[K] } = {
    id: status.id,
    name: status.name,
    state: status.state,
    attempt: status.attempt,
    updatedAt: isoTimestamp(status.updatedAt),
  };
  const { progress } = status;
  if (progress != null) stored.progress = { ...progress, at: progress.at.toISOString() };
  // A copy, so that the record (handed over to a MemoryKvStore uncopied)
  // shares no object with the status its caller keeps or publishes; only
  // failures pay for it.
  if (status.error !== undefined) stored.error = { ...status.error };
  if (status.result !== undefined) stored.result = status.result;
  if (status.resultOmitted !== undefined) stored.resultOmitted = status.resultOmitted;
  if (status.reason !== undefined) stored.reason = status.reason;
  if (status.workerId !== undefined) stored.workerId = status.workerId;
  if (status.machineId !== undefined) stored.machineId = status.machineId;
  if (status.steps !== undefined) stored.steps = status.steps;
  return stored;
}

/** Whether a stored record holds objects from its status (progress, result). */
function sharesObjects(stored: StoredTaskStatus): boolean {
  return stored.progress !== undefined || stored.result !== undefined ||
    stored.resultOmitted !== undefined || stored.steps !== undefined;
}

function fromStored(value: unknown): TaskStatus | undefined {
  if (value == null || typeof value !== "object") return undefined;
  const v = value as Partial<Record<keyof StoredTaskStatus, unknown>>;
  if (
    typeof v.id !== "string" || typeof v.name !== "string" || typeof v.state !== "string" ||
    !STATES.includes(v.state) || typeof v.attempt !== "number" || typeof v.updatedAt !== "string"
  ) {
    return undefined;
  }
  const p = v.progress as StoredTaskStatus["progress"] | undefined;
  const error = readErrorDescription(v.error);
  const steps = v.steps === undefined ? undefined : readTaskStepsStatus(v.steps);
  return {
    id: v.id,
    name: v.name,
    state: v.state as TaskState,
    attempt: v.attempt,
    ...(p == null || typeof p.at !== "string" ? {} : {
      progress: {
        ...(p.percent === undefined ? {} : { percent: p.percent }),
        ...(p.data === undefined ? {} : { data: p.data }),
        at: new Date(p.at),
      },
    }),
    ...(error === undefined ? {} : { error }),
    ...(v.result === undefined ? {} : { result: v.result }),
    ...(isOmission(v.resultOmitted) ? { resultOmitted: v.resultOmitted } : {}),
    ...(typeof v.reason === "string" ? { reason: v.reason } : {}),
    // Both or neither; a record from before 0.4.0 has neither.
    ...(typeof v.workerId === "string" && typeof v.machineId === "string"
      ? { workerId: v.workerId, machineId: v.machineId }
      : {}),
    ...(steps === undefined ? {} : { steps }),
    updatedAt: new Date(v.updatedAt),
  };
}

function isOmission(value: unknown): value is TaskResultOmission {
  if (value == null || typeof value !== "object") return false;
  const v = value as Partial<Record<keyof TaskResultOmission, unknown>>;
  return (v.reason === "too-large" || v.reason === "not-json") &&
    typeof v.message === "string" && typeof v.limit === "number" &&
    (v.bytes === undefined || typeof v.bytes === "number");
}

/**
 * Encodes an update for the pub/sub transport.
 * @param update The update.
 * @returns Its JSON text.
 * @since 0.2.0
 */
export function encodeTaskUpdate(update: TaskUpdate): string {
  return JSON.stringify({ id: update.id, kind: update.kind, status: toStored(update.status) });
}

/**
 * Decodes an update from the pub/sub transport.
 * @param payload The JSON text.
 * @returns The update, or `undefined` when the payload is not one.
 * @since 0.2.0
 */
export function decodeTaskUpdate(payload: string): TaskUpdate | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (value == null || typeof value !== "object") return undefined;
  const v = value as { id?: unknown; kind?: unknown; status?: unknown };
  const status = fromStored(v.status);
  if (
    status == null || typeof v.id !== "string" || v.id !== status.id ||
    (v.kind !== "state" && v.kind !== "progress" && v.kind !== "step")
  ) {
    return undefined;
  }
  return { id: v.id, kind: v.kind, status };
}

/**
 * Task status records in the key–value store, under
 * `["fedwork", "task-status", id]`, each written with a TTL so that the
 * store cleans them up.
 * @since 0.2.0
 */
export class TaskStatusStore {
  readonly #kv: KvStore;
  /**
   * The write options of each TTL, by milliseconds: built once, since the
   * polyfill makes building a `Temporal.Duration` cost more than the write
   * itself.
   */
  readonly #ttls = new Map<number, KvStoreSetOptions>();
  /**
   * Sends the records written in one turn (the outcomes of the tasks that
   * finished together, the `queued` records of one `enqueueTaskMany()`)
   * with one `set()` for the first and one `setMany()` for the rest, where
   * the store has it.
   */
  readonly #writes = new MicrotaskBatcher<KvStoreSetManyEntry>((writes) =>
    writes.length === 1
      ? this.#kv.set(writes[0].key, writes[0].value, writes[0].options)
      : this.#kv.setMany!(writes)
  );

  /**
   * The store when it is a `MemoryKvStore` itself, which is written at
   * once (no promise, no batch: gathering its writes would only cost the
   * microtask hops a batch waits).
   */
  readonly #memory: MemoryKvStore | undefined;
  /**
   * Whether other writes go through {@link TaskStatusStore.#writes}: on a
   * store with `setMany()`, where a batch saves round trips.
   */
  readonly #batched: boolean;

  /**
   * @param kv The key–value store.
   */
  constructor(kv: KvStore) {
    this.#kv = kv;
    this.#memory = isInMemoryKvStore(kv) ? kv : undefined;
    this.#batched = typeof kv.setMany === "function";
  }

  /**
   * Reads a task's status.
   * @param id The task's id.
   * @returns The status, or `undefined` when there is none (never
   *          enqueued here, or expired).
   */
  async get(id: string): Promise<TaskStatus | undefined> {
    return fromStored(await this.#kv.get(statusKey(id)));
  }

  /**
   * Writes a task's status.
   * @param status The status.
   * @param ttlMs How long the store keeps it, in milliseconds.
   */
  set(status: TaskStatus, ttlMs: number): Promise<void> {
    return this.write(status, ttlMs) ?? RESOLVED;
  }

  /**
   * Writes a task's status, at once when the store is a `MemoryKvStore`:
   * what `set()` does, without a promise when there is nothing to wait
   * for.  On every task run.  Internal.
   * @param status The status.
   * @param ttlMs How long the store keeps it, in milliseconds.
   * @returns Settles once written, or `undefined` when written already.
   * @since 0.3.0
   */
  write(status: TaskStatus, ttlMs: number): Promise<void> | undefined {
    try {
      const ms = Math.max(1, Math.round(ttlMs));
      let options = this.#ttls.get(ms);
      if (options == null) {
        if (this.#ttls.size >= 64) this.#ttls.clear();
        options = { ttl: toTemporalDuration({ milliseconds: ms }, "ttl") };
        this.#ttls.set(ms, options);
      }
      const key = statusKey(status.id);
      const value = toStored(status);
      if (this.#memory != null) {
        // A record with only primitive fields (no progress, result or
        // omission, the usual case) was made just now for the store: it is
        // handed over rather than copied.
        writeInMemoryNow(this.#memory, key, value, options, !sharesObjects(value));
        return undefined;
      }
      if (!this.#batched || this.#writes.first()) return this.#kv.set(key, value, options);
      // Settles with its batch: a failed setMany() rejects every write.
      return this.#writes.push({ key, value, options });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Deletes a task's status.
   * @param id The task's id.
   */
  async delete(id: string): Promise<void> {
    await this.#kv.delete(statusKey(id));
  }
}

/** A settled promise, for the writes that were done at once. */
const RESOLVED: Promise<void> = Promise.resolve();

function statusKey(id: string): KvKey {
  return ["fedwork", "task-status", id];
}
