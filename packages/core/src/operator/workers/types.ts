import type { DurationInput } from "../../time/duration.ts";

/**
 * What a worker is doing, as `listWorkers()` sees it: `busy` (running at
 * least one message at its last heartbeat), `idle`, `stopping` (its signal
 * aborted; it finishes what it runs), or `offline` (it missed its
 * heartbeats: it crashed, hangs, or lost the store).
 * @since 0.3.0
 */
export type WorkerState = "busy" | "idle" | "stopping" | "offline";

/**
 * What a worker counted since it started.
 * @since 0.3.0
 */
export interface WorkerCounts {
  /** Messages whose handler returned (or that had no listener to run). */
  readonly completed: number;
  /** Attempts that failed and will be tried again. */
  readonly retried: number;
  /** Messages that failed for good. */
  readonly failed: number;
  /** Messages dropped as unprocessable. */
  readonly dropped: number;
  /** Tasks cancelled before or while they ran. */
  readonly cancelled: number;
}

/**
 * One queue a worker listens to.
 * @since 0.3.0
 */
export interface WorkerQueueInfo {
  /** The roles the queue serves for this worker, e.g. `"task"` or `"inbox, outbox"`. */
  readonly roles: string;
  /** The queue's class name, e.g. `"PostgresMessageQueue"`. */
  readonly type: string;
  /**
   * How many messages it runs at once on this queue: the queue's
   * `concurrency` option for the durable backends (SQLite, Redis,
   * PostgreSQL, AMQP) and any queue with a numeric `concurrency` property,
   * 1 for `InProcessMessageQueue`, and `workers` times the inner queue's
   * for `ParallelMessageQueue`; `null` when the queue does not tell.
   */
  readonly concurrency: number | null;
}

/**
 * A worker started with `startQueue()`, as `listWorkers()` returns it.
 * @since 0.3.0
 */
export interface WorkerInfo {
  /** The worker's id, new at each `startQueue()`. */
  readonly id: string;
  /** The host name of its machine. */
  readonly host: string;
  /**
   * The id of its machine: `startQueue()`'s or `createFederation()`'s
   * `machineId` option, else its host name; the host name for a worker
   * older than 0.4.0, and `"unknown"` when neither is known.
   * @since 0.4.0
   */
  readonly machineId: string;
  /** Its process id. */
  readonly pid: number;
  /** Its runtime and version, e.g. `"Node.js/24"`, `"Deno/2.5.0"`, `"Bun/1.3.0"`. */
  readonly runtime: string;
  /** The queues it listens to. */
  readonly queues: readonly WorkerQueueInfo[];
  /** The capabilities it was started with (`startQueue({ capabilities })`). */
  readonly capabilities: readonly string[];
  /** When it started. */
  readonly startedAt: Date;
  /** When it last wrote its heartbeat. */
  readonly lastHeartbeatAt: Date;
  /** How often it writes its heartbeat, in milliseconds. */
  readonly heartbeatIntervalMs: number;
  /** What it is doing, as of its last heartbeat. */
  readonly state: WorkerState;
  /** The ids of the messages it was running at its last heartbeat. */
  readonly currentTaskIds: readonly string[];
  /** What it counted since it started, as of its last heartbeat. */
  readonly counts: WorkerCounts;
}

/**
 * The `presence` option of `startQueue()`: how the worker registers itself
 * in the key–value store.
 * @since 0.3.0
 */
export interface WorkerPresenceOptions {
  /**
   * How often the worker writes its record (its only store write: one per
   * interval, however many messages it runs).  At least 100 ms.
   * @default `{ seconds: 15 }`
   */
  readonly heartbeatInterval?: DurationInput;
  /**
   * After how many missed heartbeats `listWorkers()` shows it `offline`.
   * A positive integer.
   * @default `3`
   */
  readonly offlineAfterMissedHeartbeats?: number;
  /**
   * How long an offline worker stays listed before its record expires.
   * @default `{ hours: 1 }`
   */
  readonly removeAfter?: DurationInput;
}

/**
 * A worker's lifecycle event: `ready` once it registered and listens,
 * `stopping` when its signal aborted, `error` when a queue's listener
 * stopped with an error or its record could not be written.
 * @since 0.3.0
 */
export interface WorkerEvent {
  /** What happened. */
  readonly type: "ready" | "stopping" | "error";
  /** The worker, as it would be listed now. */
  readonly worker: WorkerInfo;
  /** The error, for `error`. */
  readonly error?: unknown;
}

/**
 * The workers of one machine, as `groupWorkersByMachine()` returns them.
 * @since 0.4.0
 */
export interface WorkerMachine {
  /** The machine's id (`WorkerInfo.machineId`). */
  readonly machineId: string;
  /** Its workers, in the order they were given (oldest first from `listWorkers()`). */
  readonly workers: readonly WorkerInfo[];
  /** How many of them are in each state. */
  readonly states: Readonly<Record<WorkerState, number>>;
}
