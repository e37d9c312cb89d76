// Worker presence: each startQueue() keeps one record in the key–value
// store, written once per heartbeat interval (never per message), from
// which listWorkers() tells who is running, busy, idle or gone.
import { getLogger } from "@logtape/logtape";
import type { KvKey, KvStore } from "../../kv/kv-store.ts";
import type { OutcomeType } from "../../processing/outcome.ts";
import type { WorkerRunObserver } from "../../processing/workers.ts";
import { type InFlightHandle, InFlightList } from "../../processing/in-flight-list.ts";
import type {
  WorkerCounts,
  WorkerEvent,
  WorkerInfo,
  WorkerQueueInfo,
  WorkerState,
} from "./types.ts";
import { unrefTimer } from "../../time/timer-ref.ts";

const logger = getLogger(["fedwork", "workers"]);

const PREFIX: KvKey = ["fedwork", "worker"];

/** The `presence` option checked, in milliseconds.  Internal. */
export interface ResolvedWorkerPresenceOptions {
  readonly heartbeatIntervalMs: number;
  readonly offlineAfterMissedHeartbeats: number;
  readonly removeAfterMs: number;
}

/** A worker's record in the store (JSON). */
interface StoredWorker {
  readonly id: string;
  readonly host: string;
  /** Absent in the records of workers older than 0.4.0: their host stands for it. */
  readonly machineId?: string;
  readonly pid: number;
  readonly runtime: string;
  readonly queues: readonly WorkerQueueInfo[];
  readonly capabilities: readonly string[];
  /** Epoch milliseconds. */
  readonly startedAt: number;
  /** Epoch milliseconds. */
  readonly lastHeartbeatAt: number;
  readonly heartbeatIntervalMs: number;
  /** How long without a heartbeat it is shown offline, in milliseconds. */
  readonly offlineAfterMs: number;
  readonly stopping: boolean;
  readonly running: readonly string[];
  readonly counts: WorkerCounts;
}

/**
 * The runtime and its version, from `navigator.userAgent` (which Deno,
 * Node.js 21+ and Bun all set, as `Deno/2.5.0`, `Node.js/24`, `Bun/1.3.0`).
 */
function runtimeName(): string {
  const agent = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent;
  return typeof agent === "string" && agent !== "" ? agent : "unknown";
}

/** The process id, where the runtime has a `process` global; else 0. */
function processId(): number {
  const pid = (globalThis as { process?: { pid?: unknown } }).process?.pid;
  return typeof pid === "number" ? pid : 0;
}

/**
 * One worker's presence: its identity, what it runs and has counted, and
 * the heartbeat that writes them to the store.  Internal.
 * @since 0.3.0
 */
export class WorkerPresence {
  readonly #kv: KvStore;
  readonly #options: ResolvedWorkerPresenceOptions;
  readonly #onEvent: (event: WorkerEvent) => void;
  readonly #identity: Pick<
    StoredWorker,
    "id" | "host" | "machineId" | "pid" | "runtime" | "queues" | "capabilities" | "startedAt"
  >;
  /** The ids of the messages this worker runs. */
  readonly #running = new InFlightList<string>();
  readonly #counts = { completed: 0, retried: 0, failed: 0, dropped: 0, cancelled: 0 };
  #stopping = false;
  #stopped = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #writing: Promise<void> | undefined;
  /** How many times the record was written (for measuring the cost). */
  writes = 0;

  /**
   * @param kv The store; needs `list()` for `listWorkers()` to see it.
   * @param settings The worker's id, host name and machine id (since
   *                 0.4.0), and the queues and capabilities it was started
   *                 with.
   * @param options The heartbeat settings.
   * @param onEvent Receives the worker's events; must not throw.
   */
  constructor(
    kv: KvStore,
    settings: {
      readonly queues: readonly WorkerQueueInfo[];
      readonly capabilities: readonly string[];
      readonly id: string;
      readonly host: string;
      readonly machineId: string;
    },
    options: ResolvedWorkerPresenceOptions,
    onEvent: (event: WorkerEvent) => void,
  ) {
    this.#kv = kv;
    this.#options = options;
    this.#onEvent = onEvent;
    this.#identity = {
      id: settings.id,
      host: settings.host,
      machineId: settings.machineId,
      pid: processId(),
      runtime: runtimeName(),
      queues: settings.queues.map((queue) => ({ ...queue })),
      capabilities: [...settings.capabilities],
      startedAt: Date.now(),
    };
  }

  /** The worker's id. */
  get id(): string {
    return this.#identity.id;
  }

  /** What the worker's runs tell its presence; never throws. */
  readonly observer: WorkerRunObserver<InFlightHandle<string>> = {
    started: (messageId) => this.#running.add(messageId),
    finished: (handle, outcome) => {
      this.#running.remove(handle);
      this.#count(outcome);
    },
    failed: (error) => this.#emit("error", error),
  };

  #count(outcome: OutcomeType): void {
    switch (outcome) {
      case "completed":
      case "unhandled":
        this.#counts.completed++;
        break;
      case "retrying":
        this.#counts.retried++;
        break;
      case "failed":
        this.#counts.failed++;
        break;
      case "dropped":
        this.#counts.dropped++;
        break;
      case "cancelled":
        this.#counts.cancelled++;
        break;
    }
  }

  /** The record as it stands now. */
  #record(): StoredWorker {
    const { heartbeatIntervalMs, offlineAfterMissedHeartbeats } = this.#options;
    return {
      ...this.#identity,
      lastHeartbeatAt: Date.now(),
      heartbeatIntervalMs,
      offlineAfterMs: heartbeatIntervalMs * offlineAfterMissedHeartbeats,
      stopping: this.#stopping,
      // Once each: a message redelivered while it still runs runs twice.
      running: [...new Set(this.#running.values())].filter((id) => id !== ""),
      counts: { ...this.#counts },
    };
  }

  /** The worker as `listWorkers()` would show it now. */
  info(): WorkerInfo {
    return toWorkerInfo(this.#record(), Date.now());
  }

  #emit(type: WorkerEvent["type"], error?: unknown): void {
    const event: WorkerEvent = {
      type,
      worker: this.info(),
      ...(type === "error" ? { error } : {}),
    };
    try {
      this.#onEvent(event);
    } catch (listenerError) {
      logger.error("A worker {type} listener threw: {error}", { type, error: listenerError });
    }
  }

  /** Writes the record, at most one write at a time; logs and reports failures. */
  #write(): Promise<void> {
    // Once stop() began, nothing may be written: stop() waits for the write
    // in flight and then deletes the record, and a write queued behind that
    // one (the stopping() write waits for it too) would bring it back.
    if (this.#stopped) return Promise.resolve();
    if (this.#writing != null) return this.#writing;
    const { offlineAfterMissedHeartbeats, heartbeatIntervalMs, removeAfterMs } = this.#options;
    const ttlMs = heartbeatIntervalMs * offlineAfterMissedHeartbeats + removeAfterMs;
    const writing = this.#kv.set([...PREFIX, this.#identity.id], this.#record(), {
      ttl: { milliseconds: ttlMs },
    }).then(
      () => void this.writes++,
      (error) => {
        logger.warn("Could not write the heartbeat of worker {workerId}: {error}", {
          workerId: this.#identity.id,
          error,
        });
        this.#emit("error", error);
      },
    ).finally(() => {
      this.#writing = undefined;
    });
    this.#writing = writing;
    return writing;
  }

  /**
   * Registers the worker, starts its heartbeat and emits `ready`.
   */
  async start(): Promise<void> {
    await this.#write();
    this.#timer = setInterval(() => {
      if (!this.#stopped) void this.#write();
    }, this.#options.heartbeatIntervalMs);
    // The heartbeat alone must not keep a process alive: workers started on
    // the first enqueue are never stopped, and a script that is done must
    // still exit.
    unrefTimer(this.#timer);
    logger.info(
      "Worker {workerId} is ready on {machineId} (pid {pid}), listening to {queues}.",
      {
        workerId: this.#identity.id,
        machineId: this.#identity.machineId,
        host: this.#identity.host,
        pid: this.#identity.pid,
        queues: describeQueues(this.#identity.queues.map((queue) => queue.roles)),
      },
    );
    this.#emit("ready");
  }

  /** Marks the worker stopping (one write) and emits `stopping`. */
  async stopping(): Promise<void> {
    if (this.#stopping || this.#stopped) return;
    this.#stopping = true;
    this.#emit("stopping");
    await this.#writing;
    await this.#write();
  }

  /** Stops the heartbeat and removes the record. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#writing;
    try {
      await this.#kv.delete([...PREFIX, this.#identity.id]);
    } catch (error) {
      // The record expires on its own.
      logger.warn("Could not remove the record of worker {workerId}: {error}", {
        workerId: this.#identity.id,
        error,
      });
    }
    logger.info("Worker {workerId} stopped.", { workerId: this.#identity.id });
  }
}

/**
 * Lists the workers registered in a store, oldest first.
 * @param kv The store.
 * @returns The workers, with their state as of now.
 * @since 0.3.0
 */
export async function listWorkers(kv: KvStore): Promise<WorkerInfo[]> {
  if (typeof kv.list !== "function") return [];
  const now = Date.now();
  const workers: WorkerInfo[] = [];
  for await (const entry of kv.list(PREFIX)) {
    if (isStoredWorker(entry.value)) workers.push(toWorkerInfo(entry.value, now));
  }
  return workers.sort((a, b) =>
    a.startedAt.getTime() - b.startedAt.getTime() || (a.id < b.id ? -1 : 1)
  );
}

function toWorkerInfo(stored: StoredWorker, now: number): WorkerInfo {
  const state: WorkerState = now - stored.lastHeartbeatAt > stored.offlineAfterMs
    ? "offline"
    : stored.stopping
    ? "stopping"
    : stored.running.length > 0
    ? "busy"
    : "idle";
  return {
    id: stored.id,
    host: stored.host,
    machineId: typeof stored.machineId === "string" && stored.machineId !== ""
      ? stored.machineId
      : typeof stored.host === "string" && stored.host !== ""
      ? stored.host
      : "unknown",
    pid: stored.pid,
    runtime: stored.runtime,
    queues: stored.queues.map((queue) => ({ ...queue })),
    capabilities: [...stored.capabilities],
    startedAt: new Date(stored.startedAt),
    lastHeartbeatAt: new Date(stored.lastHeartbeatAt),
    heartbeatIntervalMs: stored.heartbeatIntervalMs,
    state,
    currentTaskIds: [...stored.running],
    counts: { ...stored.counts },
  };
}

function isStoredWorker(value: unknown): value is StoredWorker {
  if (typeof value !== "object" || value == null) return false;
  const worker = value as Partial<StoredWorker>;
  return typeof worker.id === "string" && typeof worker.lastHeartbeatAt === "number" &&
    typeof worker.offlineAfterMs === "number" && Array.isArray(worker.running) &&
    Array.isArray(worker.queues) && typeof worker.counts === "object" && worker.counts != null;
}

/**
 * Names the queues of a worker in words, for its ready line: "one queue
 * for inbox, outbox, fanout and task", "the inbox queue; one queue for
 * outbox and task", "no queues".
 * @param labels Each queue's roles, as `"outbox, task"`.
 * @returns The words.
 */
export function describeQueues(labels: readonly string[]): string {
  const words = labels.map((label) => {
    const roles = label.split(", ");
    return roles.length === 1 ? `the ${roles[0]} queue` : `one queue for ${andList(roles)}`;
  });
  // Semicolons, since a queue's own roles are listed with commas.
  return words.length === 0 ? "no queues" : words.join("; ");
}

function andList(items: readonly string[]): string {
  return items.length < 2
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;
}
