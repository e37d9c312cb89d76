// Readiness: one cheap probe per engine (a key read, a queue's depth, a
// publish, the worker list), all at once, each within a time limit, and at
// most one pending call per engine however often the report is asked for.
import type { KvStore } from "../../kv/kv-store.ts";
import type { QueueRole } from "../../processing/queue-roles.ts";
import type { PubSub } from "../../pubsub/pubsub.ts";
import type { MessageQueue, MessageQueueDepth } from "../../queue/message-queue.ts";
import type { WorkerInfo } from "../workers/types.ts";
import { type ResolvedHealthCheckOptions, resolveHealthCheckOptions } from "./options.ts";
import type { EngineHealth, HealthCheckOptions, HealthReport, WorkersHealth } from "./types.ts";

/** A distinct queue of the federation, with the roles it serves.  Internal. */
export interface HealthQueue {
  /** The label `getQueueDepths()` uses. */
  readonly label: string;
  readonly roles: readonly QueueRole[];
  readonly queue: MessageQueue;
}

/**
 * What {@link HealthChecker} needs from the federation.  Internal.
 * @since 0.4.0
 */
export interface HealthPort {
  readonly kv: KvStore;
  /** The class name of the store, for the report (`kv` may be a wrapper). */
  readonly kvType: string;
  readonly pubsub: PubSub;
  /** The federation's distinct queues. */
  queues(): readonly HealthQueue[];
  listWorkers(): Promise<WorkerInfo[]>;
}

/** The key the store probe reads; nothing writes it. */
const PROBE_KEY = ["fedwork", "health", "probe"] as const;
/** The topic the pub/sub probe publishes on; nothing subscribes to it. */
const PROBE_TOPIC = "fedwork:health";

type Probed<T> =
  | { readonly ok: true; readonly value: T; readonly ms: number }
  | { readonly ok: false; readonly reason: string; readonly ms: number };

/**
 * Checks a federation's readiness.  Internal: `Federation.checkHealth()`
 * forwards to it.
 * @since 0.4.0
 */
export class HealthChecker {
  readonly #port: HealthPort;
  /** The probes that have not settled yet, by engine, with their start. */
  readonly #pending = new Map<string, number>();

  /**
   * @param port What it probes.
   */
  constructor(port: HealthPort) {
    this.#port = port;
  }

  /**
   * Probes every engine and the workers and judges them.
   * @param options The time limit and thresholds.
   * @returns The report.
   */
  async check(options?: HealthCheckOptions): Promise<HealthReport> {
    const resolved = resolveHealthCheckOptions(options);
    const startedAt = Date.now();
    const { kv, pubsub } = this.#port;
    const queues = this.#port.queues();
    const [kvProbe, pubsubProbe, workersProbe, ...queueProbes] = await Promise.all([
      this.#probe("kv", resolved.timeoutMs, () => kv.get([...PROBE_KEY])),
      this.#probe("pubsub", resolved.timeoutMs, () => pubsub.publish(PROBE_TOPIC, "")),
      this.#probe("workers", resolved.timeoutMs, () => this.#port.listWorkers()),
      ...queues.map(({ label, queue }) =>
        this.#probe(
          `queue:${label}`,
          resolved.timeoutMs,
          () => typeof queue.getDepth === "function" ? queue.getDepth() : undefined,
        )
      ),
    ]);
    const engines: EngineHealth[] = [
      engine("kv", "kv", this.#port.kvType, kvProbe),
      ...queues.map((queue, index) => queueHealth(queue, queueProbes[index], resolved)),
      engine("pubsub", "pubsub", typeName(pubsub), pubsubProbe),
    ];
    const workers = workersHealth(workersProbe, resolved.minWorkers);
    const reasons = engines
      .filter((check) => check.status === "failing")
      .map((check) => `${describeEngine(check)}: ${check.reason}`);
    if (workers.status === "failing") reasons.push(`workers: ${workers.reason}`);
    return {
      ready: reasons.length === 0,
      reasons,
      checkedAt: new Date(startedAt),
      durationMs: Date.now() - startedAt,
      engines,
      workers,
    };
  }

  async #probe<T>(key: string, timeoutMs: number, call: () => Promise<T> | T): Promise<Probed<T>> {
    const started = Date.now();
    const previous = this.#pending.get(key);
    if (previous !== undefined) {
      return {
        ok: false,
        reason: `its previous probe, started ${started - previous} ms ago, has not settled`,
        ms: 0,
      };
    }
    this.#pending.set(key, started);
    const running = (async () => await call())();
    running.then(
      () => this.#pending.delete(key),
      () => this.#pending.delete(key),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      const result = await Promise.race([running.then((value) => ({ value })), timedOut]);
      const ms = Date.now() - started;
      if (result === "timeout") {
        return { ok: false, reason: `no answer within ${timeoutMs} ms`, ms };
      }
      return { ok: true, value: result.value, ms };
    } catch (error) {
      return { ok: false, reason: messageOf(error), ms: Date.now() - started };
    } finally {
      clearTimeout(timer);
    }
  }
}

function engine(
  kind: EngineHealth["kind"],
  name: string,
  type: string,
  probe: Probed<unknown>,
): EngineHealth {
  const base = { kind, name, type, latencyMs: probe.ms };
  return probe.ok
    ? { ...base, status: "ok" }
    : { ...base, status: "failing", reason: probe.reason };
}

function queueHealth(
  { label, roles, queue }: HealthQueue,
  probe: Probed<MessageQueueDepth | undefined>,
  options: ResolvedHealthCheckOptions,
): EngineHealth {
  const checked = engine("queue", label, typeName(queue), probe);
  if (!probe.ok) return checked;
  const limits = roles
    .map((role) => options.maxReadyMessages[role])
    .filter((limit): limit is number => limit !== undefined);
  const maxReadyMessages = limits.length > 0 ? Math.min(...limits) : undefined;
  const withLimit = maxReadyMessages === undefined ? checked : { ...checked, maxReadyMessages };
  const depth = probe.value;
  if (depth == null) {
    return {
      ...withLimit,
      status: "unknown",
      reason: "the queue has no getDepth(), so neither its reachability nor its lag is known",
    };
  }
  const ready = depth.ready ?? depth.queued;
  const withDepth = { ...withLimit, depth: { ...depth } };
  if (maxReadyMessages !== undefined && ready > maxReadyMessages) {
    return {
      ...withDepth,
      status: "failing",
      reason: `${ready} ${
        depth.ready === undefined ? "queued" : "ready"
      } messages, above maxReadyMessages ${maxReadyMessages}`,
    };
  }
  return withDepth;
}

function workersHealth(probe: Probed<WorkerInfo[]>, minWorkers: number): WorkersHealth {
  if (!probe.ok) {
    return {
      status: minWorkers > 0 ? "failing" : "unknown",
      alive: 0,
      stopping: 0,
      offline: 0,
      minWorkers,
      reason: `the list of workers could not be read: ${probe.reason}`,
    };
  }
  let alive = 0, stopping = 0, offline = 0;
  for (const worker of probe.value) {
    if (worker.state === "offline") offline++;
    else if (worker.state === "stopping") stopping++;
    else alive++;
  }
  const counts = { alive, stopping, offline, minWorkers };
  if (alive < minWorkers) {
    return {
      status: "failing",
      ...counts,
      reason: `${alive} live workers, fewer than minWorkers ${minWorkers}` +
        (offline > 0 ? ` (${offline} offline)` : ""),
    };
  }
  return { status: "ok", ...counts };
}

function typeName(value: object): string {
  return value.constructor?.name ?? "Object";
}

function describeEngine(check: EngineHealth): string {
  return check.kind === "queue"
    ? `queue ${check.name} (${check.type})`
    : `${check.kind} (${check.type})`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
