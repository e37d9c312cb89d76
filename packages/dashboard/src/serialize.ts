// The JSON the dashboard's API serves, made from what the operator API
// returns: one shape per kind of thing, shared with the `fedwork` CLI's
// `--json` output so that scripts read the same fields from both.
import type { FailedTaskDetails, QueueDepthEntry, TaskRecord } from "@fedwork/core";
import { toDisplayText } from "./display.ts";
import type { DashboardHostHealth, DashboardTaskUpdate, DashboardWorker } from "./source.ts";

/**
 * One queue's depth as JSON (see `Federation.getQueueDepths()`).
 * @since 0.4.0
 */
export interface QueueDepthJson {
  /** The role the queue serves. */
  readonly role: string;
  /** Which queue (the roles sharing it, or `task:` and task names). */
  readonly queue: string;
  /** What the queue reports, or `null` when it cannot tell. */
  readonly depth: {
    readonly queued: number;
    readonly ready: number | null;
    readonly delayed: number | null;
  } | null;
}

/**
 * An unhealthy remote host as JSON (see `Federation.listUnhealthyHosts()`).
 * @since 0.4.0
 */
export interface HostHealthJson {
  /** The host. */
  readonly host: string;
  /** How many deliveries in a row failed. */
  readonly consecutiveFailures: number;
  /** Since when it is unhealthy, ISO 8601. */
  readonly since: string | null;
  /** When it is probed next, ISO 8601, if known. */
  readonly nextProbeAt: string | null;
  /** How many deliveries wait for it. */
  readonly parkedDeliveries: number;
  /** Whether it was declared dead. */
  readonly dead: boolean;
}

/**
 * A worker as JSON (see `Federation.listWorkers()`).
 * @since 0.4.0
 */
export interface WorkerJson {
  /** The worker's id. */
  readonly id: string;
  /** Its machine's host name. */
  readonly host: string;
  /** Its machine's id: `machineId`, else the host name. */
  readonly machineId: string;
  /** Its process id. */
  readonly pid: number;
  /** Its runtime. */
  readonly runtime: string;
  /** The queues it listens to, as `roles × concurrency` when known. */
  readonly queues: readonly string[];
  /** Its capabilities. */
  readonly capabilities: readonly string[];
  /** `busy`, `idle`, `stopping` or `offline`. */
  readonly state: string;
  /** When it last wrote its heartbeat, ISO 8601. */
  readonly lastHeartbeatAt: string | null;
  /** The messages it runs. */
  readonly currentTaskIds: readonly string[];
  /** How many messages it completed since it started. */
  readonly completed: number;
  /** How many failed for good since it started. */
  readonly failed: number;
}

/**
 * A failed or completed task's record as JSON (see
 * `Federation.listFailedTasks()`).
 * @since 0.4.0
 */
export interface TaskRecordJson {
  /** The task's message id. */
  readonly id: string;
  /** `task`, `delivery`, `inbox` or `fanout`. */
  readonly kind: string;
  /** The task's name (`fedwork:delivery` for a delivery). */
  readonly taskName: string;
  /** What a quarantined inbox or fan-out message carried. */
  readonly message: {
    readonly activityType: string | null;
    readonly activityId: string | null;
    readonly deliveries: number | null;
  } | null;
  /** Where a failed delivery went. */
  readonly delivery: {
    readonly inbox: string;
    readonly activityType: string;
    readonly activityId: string | null;
    readonly statusCode: number | null;
  } | null;
  /** Why it failed for good, for a failed task. */
  readonly reason: string | null;
  /** How many attempts it had. */
  readonly attempts: number;
  /** When it was first enqueued, ISO 8601. */
  readonly enqueuedAt: string | null;
  /** When it ended, ISO 8601. */
  readonly finishedAt: string | null;
  /** The last error's name and message. */
  readonly error: { readonly name: string; readonly message: string } | null;
}

/**
 * A failed task with its stack and payload as JSON (see
 * `Federation.getFailedTask()`).
 * @since 0.4.0
 */
export interface FailedTaskJson extends TaskRecordJson {
  /** The last error's stack, when it had one. */
  readonly stack: string | null;
  /** The task's ordering key, if it had one. */
  readonly orderingKey: string | null;
  /** The decoded payload as indented text (see {@link toDisplayText}). */
  readonly payload: string | null;
  /** Why the payload could not be decoded, when it could not. */
  readonly payloadError: string | null;
}

/**
 * A task update as JSON (see `Federation.watchTasks()`).
 * @since 0.4.0
 */
export interface TaskUpdateJson {
  /** The task's id. */
  readonly id: string;
  /** Whether the state changed or progress was reported. */
  readonly kind: string;
  /** The task's name. */
  readonly name: string;
  /** Its state after the update. */
  readonly state: string;
  /** Its attempt. */
  readonly attempt: number | null;
  /** Its last progress percentage. */
  readonly percent: number | null;
  /** Its last progress data, as one line of text. */
  readonly data: string | null;
  /** The last error (`name: message`), or why it was dropped. */
  readonly error: string | null;
  /** The worker that runs or ran it, if known. */
  readonly workerId: string | null;
  /** That worker's machine, if known. */
  readonly machineId: string | null;
  /**
   * For a task made of durable steps: the step it is at (its id, kind and
   * phase, or `null` between steps) and how many are recorded.
   */
  readonly steps: {
    readonly current: { readonly id: string; readonly kind: string; readonly phase: string } | null;
    readonly recordedCount: number;
  } | null;
  /** When the update was made, ISO 8601. */
  readonly updatedAt: string | null;
}

/**
 * Turns a queue depth entry into JSON.
 * @param entry The entry.
 * @returns Its JSON.
 * @since 0.4.0
 */
export function serializeQueueDepth(entry: QueueDepthEntry): QueueDepthJson {
  const { role, queue, depth } = entry;
  return {
    role,
    queue,
    depth: depth == null
      ? null
      : { queued: depth.queued, ready: depth.ready ?? null, delayed: depth.delayed ?? null },
  };
}

/**
 * Turns an unhealthy host into JSON.
 * @param host The host's health.
 * @returns Its JSON.
 * @since 0.4.0
 */
export function serializeHostHealth(host: DashboardHostHealth): HostHealthJson {
  return {
    host: String(host.host),
    consecutiveFailures: host.consecutiveFailures,
    since: isoOrNull(host.since),
    nextProbeAt: isoOrNull(host.nextProbeAt),
    parkedDeliveries: host.parkedDeliveries,
    dead: host.dead === true,
  };
}

/**
 * Turns a worker into JSON.
 * @param worker The worker.
 * @returns Its JSON.
 * @since 0.4.0
 */
export function serializeWorker(worker: DashboardWorker): WorkerJson {
  return {
    id: String(worker.id),
    host: String(worker.host),
    machineId: typeof worker.machineId === "string" && worker.machineId !== ""
      ? worker.machineId
      : String(worker.host),
    pid: worker.pid,
    runtime: String(worker.runtime),
    // "task × 8": what a worker can take on, beside what it runs.
    queues: worker.queues.map((queue) =>
      typeof queue.concurrency === "number" && Number.isFinite(queue.concurrency)
        ? `${String(queue.roles)} × ${queue.concurrency}`
        : String(queue.roles)
    ),
    capabilities: worker.capabilities.map(String),
    state: String(worker.state),
    lastHeartbeatAt: isoOrNull(worker.lastHeartbeatAt),
    currentTaskIds: worker.currentTaskIds.map(String),
    completed: worker.counts.completed,
    failed: worker.counts.failed,
  };
}

/**
 * Turns a failed or completed task's record into JSON, without its payload.
 * @param record The record.
 * @returns Its JSON.
 * @since 0.4.0
 */
export function serializeTaskRecord(record: TaskRecord): TaskRecordJson {
  return {
    id: record.id,
    kind: record.kind === "delivery" || record.kind === "inbox" || record.kind === "fanout"
      ? record.kind
      : "task",
    taskName: record.taskName,
    message: record.message == null ? null : {
      activityType: record.message.activityType ?? null,
      activityId: record.message.activityId ?? null,
      deliveries: record.message.deliveries ?? null,
    },
    delivery: record.delivery == null ? null : {
      inbox: String(record.delivery.inbox),
      activityType: String(record.delivery.activityType),
      activityId: record.delivery.activityId ?? null,
      statusCode: record.delivery.statusCode ?? null,
    },
    reason: record.reason ?? null,
    attempts: record.attempts,
    enqueuedAt: isoOrNull(record.enqueuedAt),
    finishedAt: isoOrNull(record.finishedAt),
    error: record.error == null ? null : { name: record.error.name, message: record.error.message },
  };
}

/**
 * Turns a failed task with its payload into JSON, the payload as text.
 * @param details What `getFailedTask()` returned.
 * @returns Its JSON.
 * @since 0.4.0
 */
export async function serializeFailedTask(details: FailedTaskDetails): Promise<FailedTaskJson> {
  return {
    ...serializeTaskRecord(details),
    stack: details.error?.stack ?? null,
    orderingKey: details.orderingKey ?? null,
    payload: details.payloadError == null ? await toDisplayText(details.payload) : null,
    payloadError: details.payloadError ?? null,
  };
}

/**
 * Turns a task update into JSON.
 * @param update The update.
 * @returns Its JSON.
 * @since 0.4.0
 */
export async function serializeTaskUpdate(update: DashboardTaskUpdate): Promise<TaskUpdateJson> {
  const { status } = update;
  const progress = status?.progress;
  return {
    id: String(update.id),
    kind: String(update.kind),
    name: String(status?.name ?? ""),
    state: String(status?.state ?? ""),
    attempt: typeof status?.attempt === "number" ? status.attempt : null,
    percent: typeof progress?.percent === "number" && Number.isFinite(progress.percent)
      ? progress.percent
      : null,
    data: progress?.data === undefined ? null : await toDisplayText(progress.data, 0),
    error: errorText(status),
    workerId: typeof status?.workerId === "string" ? status.workerId : null,
    machineId: typeof status?.machineId === "string" ? status.machineId : null,
    steps: stepsOf(status),
    updatedAt: status?.updatedAt instanceof Date ? status.updatedAt.toISOString() : null,
  };
}

/** The durable-steps part of an update, checked field by field. */
function stepsOf(status: DashboardTaskUpdate["status"] | undefined): TaskUpdateJson["steps"] {
  const steps = status?.steps;
  if (steps == null || typeof steps.recordedCount !== "number") return null;
  const current = steps.current;
  return {
    current: current != null && typeof current.id === "string"
      ? {
        id: current.id.slice(0, 200),
        kind: String(current.kind).slice(0, 20),
        phase: String(current.phase).slice(0, 20),
      }
      : null,
    recordedCount: steps.recordedCount,
  };
}

/**
 * The error line of an update: the error's name and message, or, for a
 * task dropped without an error, why it was dropped.
 */
function errorText(status: DashboardTaskUpdate["status"] | undefined): string | null {
  const error = status?.error;
  if (error != null) return `${String(error.name)}: ${String(error.message)}`;
  return status?.state === "dropped" && status.reason != null ? String(status.reason) : null;
}

function isoOrNull(date: Date | undefined): string | null {
  return date instanceof Date && !Number.isNaN(date.getTime()) ? date.toISOString() : null;
}
