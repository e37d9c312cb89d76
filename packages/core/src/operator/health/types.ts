import type { QueueRole } from "../../processing/queue-roles.ts";
import type { MessageQueueDepth } from "../../queue/message-queue.ts";
import type { DurationInput } from "../../time/duration.ts";

/**
 * How one check of a readiness report came out: `ok`; `failing` (the
 * engine did not answer within the probe's time limit, answered with an
 * error, or a threshold was passed; the report is not ready); or `unknown`
 * (the engine cannot tell, e.g. a queue without `getDepth()`; the report
 * may still be ready).
 * @since 0.4.0
 */
export type HealthCheckStatus = "ok" | "failing" | "unknown";

/**
 * One engine a readiness report probed: the key–value store, a queue, or
 * the pub/sub transport.
 * @since 0.4.0
 */
export interface EngineHealth {
  /** What the engine is to the federation. */
  readonly kind: "kv" | "queue" | "pubsub";
  /**
   * Which one: `"kv"` and `"pubsub"`, or for a queue the label
   * `getQueueDepths()` uses (the roles sharing it joined by `+`, such as
   * `"inbox+outbox+fanout+task"`, or `task:` and the names of the tasks
   * that have their own queue).
   */
  readonly name: string;
  /** The engine's class name, e.g. `"RedisKvStore"`. */
  readonly type: string;
  /** How the probe came out. */
  readonly status: HealthCheckStatus;
  /** How long the probe took, in milliseconds (the time limit, when it ran out). */
  readonly latencyMs: number;
  /** Why it is `failing` or `unknown`, for people. */
  readonly reason?: string;
  /** For a queue that told it: its depth. */
  readonly depth?: MessageQueueDepth;
  /** For a queue with a threshold: the most ready messages it may hold. */
  readonly maxReadyMessages?: number;
}

/**
 * The workers of a readiness report, as `listWorkers()` lists them.
 * @since 0.4.0
 */
export interface WorkersHealth {
  /** `failing` with fewer live workers than `minWorkers`, or when the list could not be read. */
  readonly status: HealthCheckStatus;
  /** Workers that are `busy` or `idle` (their heartbeat is recent). */
  readonly alive: number;
  /** Workers that are `stopping`. */
  readonly stopping: number;
  /** Workers listed `offline` (they missed their heartbeats). */
  readonly offline: number;
  /** The `minWorkers` the report was checked against. */
  readonly minWorkers: number;
  /** Why it is `failing` or `unknown`, for people. */
  readonly reason?: string;
}

/**
 * What `Federation.checkHealth()` found: whether the federation is ready to
 * serve (every engine answered in time, enough workers are alive, no queue
 * holds more ready messages than allowed), and each check.  It serializes
 * to the JSON body of the readiness endpoint.
 * @since 0.4.0
 */
export interface HealthReport {
  /** Whether no check is `failing`. */
  readonly ready: boolean;
  /** Why it is not ready, one sentence per failing check; empty when ready. */
  readonly reasons: readonly string[];
  /** When the checks started. */
  readonly checkedAt: Date;
  /** How long the checks took together, in milliseconds. */
  readonly durationMs: number;
  /** The key–value store, each distinct queue, and the pub/sub transport. */
  readonly engines: readonly EngineHealth[];
  /** The workers. */
  readonly workers: WorkersHealth;
}

/**
 * Options for `Federation.checkHealth()` and `createHealthHandler()`: the
 * probes' time limit and the thresholds of readiness.
 * @since 0.4.0
 */
export interface HealthCheckOptions {
  /**
   * How long each probe may take (a key read, a queue's `getDepth()`, a
   * publish, the list of workers); a probe that takes longer is `failing`.
   * All probes run at once, so a report takes about this long at most.
   * @default `{ seconds: 2 }`
   */
  readonly timeout?: DurationInput;
  /**
   * How many live (`busy` or `idle`) workers readiness needs, counted over
   * every process sharing the key–value store.  The default, 0, reports the
   * workers without judging them: a web process whose workers run
   * elsewhere should not leave the load balancer because they are down.
   * A non-negative integer.
   * @default `0`
   */
  readonly minWorkers?: number;
  /**
   * The most ready messages (waiting for a worker, not delayed) a queue may
   * hold and still count as ready: one number for every queue, or one per
   * role (a queue serving several roles gets the smallest of theirs; a
   * task's own queue the `task` one).  The queue lag where an engine can
   * tell it: a queue that does not report `ready` is judged by `queued`.
   * No limit by default.  Non-negative integers.
   */
  readonly maxReadyMessages?: number | Readonly<Partial<Record<QueueRole, number>>>;
}

/**
 * What checks the health of a federation: `Federation` has this method.
 * @since 0.4.0
 */
export interface HealthOperations {
  /**
   * Probes the key–value store (one read), every distinct queue (its
   * `getDepth()`), the pub/sub transport (one publish on a topic of its
   * own) and the list of workers, all at once, each within `timeout`, and
   * judges the answers against `minWorkers` and `maxReadyMessages`.  A
   * probe whose previous call on the same engine is still pending is not
   * started again: it counts as failing, so that a hung engine never
   * collects a pile of calls however often the report is asked for.
   * @param options The time limit and thresholds.
   * @returns The report; it never throws for an engine's failure.
   * @throws {TypeError} When an option is invalid (the message names it).
   * @example
   * ```ts ignore
   * const report = await federation.checkHealth({ maxReadyMessages: 1000 });
   * if (!report.ready) console.error(report.reasons.join("\n"));
   * ```
   */
  checkHealth(options?: HealthCheckOptions): Promise<HealthReport>;
}

/**
 * Options for `createHealthHandler()`: the check options, the two paths,
 * who may ask, and how long a readiness report is reused.
 *
 * Who may ask: a request with `Authorization: Bearer <token>` when `token`
 * is set; otherwise only a request the server says came from a loopback
 * address (the `remoteAddress` the application passes) and that carries
 * none of the headers a reverse proxy adds (`Forwarded`,
 * `X-Forwarded-For`, `X-Real-IP`): behind a proxy on the same machine every
 * request comes from loopback, and only these headers tell a public one
 * apart, so they are never trusted to *grant* access, only to refuse it.
 * Everyone else gets 403.
 * @since 0.4.0
 */
export interface HealthHandlerOptions extends HealthCheckOptions {
  /**
   * The path of the liveness endpoint: 200 while the process answers at
   * all; it probes nothing.
   * @default `"/healthz"`
   */
  readonly livenessPath?: string;
  /**
   * The path of the readiness endpoint: 200 with the report as JSON when
   * ready, 503 with it when not.
   * @default `"/readyz"`
   */
  readonly readinessPath?: string;
  /**
   * A secret (at least 16 characters) that grants access from anywhere as
   * `Authorization: Bearer <token>`, for a load balancer on another
   * machine.  None by default.
   */
  readonly token?: string;
  /**
   * Whether a loopback request without forwarded headers may ask without
   * the token.  `false` needs `token`.
   * @default `true`
   */
  readonly allowLoopback?: boolean;
  /**
   * How long one readiness report answers every request, so that however
   * often load balancers ask, the engines are probed at most once per
   * period; concurrent requests share one check.
   * @default `{ seconds: 1 }`
   */
  readonly cacheFor?: DurationInput;
}
