import type {
  FailedTaskDetails,
  ListTaskRecordsOptions,
  QueueDepthEntry,
  TaskEnqueueResult,
  TaskRecordPage,
  ThroughputBucket,
} from "@fedwork/core";

/**
 * A task's state change or progress report, as the dashboard reads it from
 * `federation.watchTasks()`: the fields it shows, loosely typed so that any
 * federation version that has the method fits.
 * @since 0.2.0
 */
export interface DashboardTaskUpdate {
  /** The task's message id. */
  readonly id: string;
  /** Whether the state changed or progress was reported. */
  readonly kind: string;
  /** The task's status after the update. */
  readonly status: {
    readonly name: string;
    readonly state: string;
    readonly attempt: number;
    readonly progress?: {
      readonly percent?: number;
      readonly data?: unknown;
      readonly at: Date;
    };
    /** The last error's name and message (a string before 0.4.0). */
    readonly error?: { readonly name: string; readonly message: string };
    /** Why the task was dropped or cancelled, if a reason was given. */
    readonly reason?: string;
    /** The worker that runs or ran it (since 0.4.0). */
    readonly workerId?: string;
    /** That worker's machine (since 0.4.0). */
    readonly machineId?: string;
    /**
     * Its durable steps: the step it is at and how many are recorded
     * (since 0.4.0).
     */
    readonly steps?: {
      readonly current?: { readonly id: string; readonly kind: string; readonly phase: string };
      readonly recordedCount: number;
    };
    readonly updatedAt: Date;
  };
}

/**
 * A remote host that deliveries fail to, as the dashboard reads it from
 * `federation.listUnhealthyHosts()`.
 * @since 0.2.0
 */
export interface DashboardHostHealth {
  /** The host, e.g. `"example.com"`. */
  readonly host: string;
  /** How many deliveries in a row failed. */
  readonly consecutiveFailures: number;
  /** Since when it is unhealthy. */
  readonly since: Date;
  /** When it is probed next, if known. */
  readonly nextProbeAt?: Date;
  /** How many deliveries wait for it to answer again. */
  readonly parkedDeliveries: number;
  /**
   * Whether it was declared dead (its deliveries fail for good until it is
   * released); absent before 0.3.0.
   * @since 0.3.0
   */
  readonly dead?: boolean;
}

/**
 * What the dashboard needs from a federation: any `Federation` of
 * `@fedwork/core` fits.  `watchTasks()` (live progress) and
 * `listUnhealthyHosts()` (remote-server health) are optional: without
 * them, their panels say they are not available.
 * @since 0.2.0
 */
export interface DashboardFederation {
  /** See `Federation.getQueueDepths()`. */
  getQueueDepths(): Promise<QueueDepthEntry[]>;
  /** See `Federation.getThroughput()`. */
  getThroughput(options?: { readonly minutes?: number }): Promise<ThroughputBucket[]>;
  /** See `Federation.listFailedTasks()`. */
  listFailedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage>;
  /** See `Federation.getFailedTask()`. */
  getFailedTask(id: string): Promise<FailedTaskDetails | undefined>;
  /** See `Federation.retryFailedTask()`. */
  retryFailedTask(id: string): Promise<TaskEnqueueResult>;
  /** See `Federation.discardFailedTask()`. */
  discardFailedTask(id: string): Promise<boolean>;
  /** See `Federation.countFailedTasks()`. */
  countFailedTasks(): Promise<Map<string, number>>;
  /** See `Federation.watchTasks()`; optional. */
  watchTasks?(options?: { signal?: AbortSignal }): AsyncIterable<DashboardTaskUpdate>;
  /** See `Federation.listUnhealthyHosts()`; optional. */
  listUnhealthyHosts?(): Promise<readonly DashboardHostHealth[]>;
  /**
   * See `Federation.releaseHost()`; optional (without it, hosts have no
   * Release button).
   * @since 0.3.0
   */
  releaseHost?(host: string): Promise<boolean>;
  /**
   * See `Federation.cancelTask()`; optional (without it, live tasks have
   * no Cancel button).
   * @since 0.3.0
   */
  cancelTask?(
    id: string,
    options?: { readonly reason?: string },
  ): Promise<{ readonly status: string; readonly state?: string }>;
  /**
   * See `Federation.listWorkers()`; optional (without it, the workers
   * panel says it is not available).
   * @since 0.3.0
   */
  listWorkers?(): Promise<readonly DashboardWorker[]>;
  /**
   * See `Federation.listPaused()`; optional (without it and the four
   * methods below, the page shows no pause state or buttons).
   * @since 0.4.0
   */
  listPaused?(): Promise<{ readonly tasks: readonly string[]; readonly roles: readonly string[] }>;
  /**
   * See `Federation.pauseTask()`; optional.
   * @since 0.4.0
   */
  pauseTask?(task: string): Promise<void>;
  /**
   * See `Federation.resumeTask()`; optional.
   * @since 0.4.0
   */
  resumeTask?(task: string): Promise<void>;
  /**
   * See `Federation.pauseRole()`; optional.
   * @since 0.4.0
   */
  pauseRole?(role: DashboardRole): Promise<void>;
  /**
   * See `Federation.resumeRole()`; optional.
   * @since 0.4.0
   */
  resumeRole?(role: DashboardRole): Promise<void>;
  /**
   * See `Federation.getTaskSteps()`; optional (without it, live tasks have
   * no Steps button).
   * @since 0.4.0
   */
  getTaskSteps?(id: string): Promise<readonly DashboardTaskStep[]>;
}

/**
 * One durable step of a task, as the dashboard reads it from
 * `federation.getTaskSteps()`.
 * @since 0.4.0
 */
export interface DashboardTaskStep {
  /** The step's id. */
  readonly id: string;
  /** `run`, `sleep`, `wait`, `activity` or `invoke`. */
  readonly kind: string;
  /** `done`, `sleeping`, `waiting` or `retrying`. */
  readonly state: string;
  /** When it was recorded, or when its sleep or wait began. */
  readonly at: Date;
  /** For a pending sleep or wait: when it ends at the latest. */
  readonly until?: Date;
  /** For a retrying `run` step: how many times it failed. */
  readonly failures?: number;
  /** For an `invoke`: the child task's id. */
  readonly childId?: string;
}

/**
 * A queue role that can be paused from the dashboard.
 * @since 0.4.0
 */
export type DashboardRole = "inbox" | "outbox" | "fanout" | "task";

/**
 * A worker as the dashboard shows it: what `Federation.listWorkers()`
 * returns.
 * @since 0.3.0
 */
export interface DashboardWorker {
  /** The worker's id. */
  readonly id: string;
  /** Its machine's host name. */
  readonly host: string;
  /**
   * Its machine's id (`WorkerInfo.machineId`); the host name stands for it
   * when absent (a federation older than 0.4.0).
   * @since 0.4.0
   */
  readonly machineId?: string;
  /** Its process id. */
  readonly pid: number;
  /** Its runtime. */
  readonly runtime: string;
  /**
   * The queues it listens to, each with how many messages it runs at once
   * there (`null` or absent when the queue does not tell; shown since
   * 0.3.0).
   */
  readonly queues: readonly { readonly roles: string; readonly concurrency?: number | null }[];
  /** Its capabilities. */
  readonly capabilities: readonly string[];
  /** `busy`, `idle`, `stopping` or `offline`. */
  readonly state: string;
  /** When it last wrote its heartbeat. */
  readonly lastHeartbeatAt: Date;
  /** The messages it runs. */
  readonly currentTaskIds: readonly string[];
  /** What it counted since it started. */
  readonly counts: { readonly completed: number; readonly failed: number };
}
