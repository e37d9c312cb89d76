// The operator features of one federation, built from one port and
// connected to each other: task records, status, cancellation, schedules,
// batches, webhooks, host health and the queue monitoring.  The
// federation's operator methods (`listFailedTasks()`, `getTaskStatus()`,
// `addWebhook()` …) forward to this object; none of the features sees the
// federation.
import { FederationPauses } from "./pauses/mod.ts";
import type { MessageRunners } from "../processing/message-runners.ts";
import type { DocumentLoader } from "@fedify/vocab";
import type { KvStore } from "../kv/kv-store.ts";
import type { MessageObserver } from "../processing/dispatcher.ts";
import type { MessageMetrics } from "../processing/metrics.ts";
import type { MessageProducer } from "../processing/producer.ts";
import type { QueueRole } from "../processing/queue-roles.ts";
import type { GetThroughputOptions, ThroughputBucket } from "../processing/throughput.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { TaskCancellations } from "./cancellation/markers.ts";
import type { TaskDefinition, TaskEnqueueResult } from "../tasks/definition.ts";
import type { TaskEnqueuer } from "../tasks/enqueuer.ts";
import type { ListTaskRecordsOptions, TaskRecordPage } from "./records/record-store.ts";
import type { TaskStore } from "../tasks/registry.ts";
import { taskQueueOf, type TaskQueueRoutingOptions } from "../tasks/routing.ts";
import type { TaskSchedule } from "./schedules/mod.ts";
import { FederationBatches } from "./batches/batches.ts";
import type { BatchStatus, WatchBatchOptions } from "./batches/types.ts";
import {
  TaskCanceller,
  type TaskCancelOptions,
  type TaskCancelResult,
} from "./cancellation/mod.ts";
import { FederationHostHealth } from "./host-health/mod.ts";
import { hostHealthOutbox, type ResolvedHostHealthOptions } from "./host-health/options.ts";
import type { HostHealth } from "./host-health/types.ts";
import type { InternalTaskPort } from "./internal-tasks/mod.ts";
import { HealthChecker, type HealthReport } from "./health/mod.ts";
import type { HealthCheckOptions } from "./health/types.ts";
import { collectQueueDepths, labelQueues, type QueueDepthEntry } from "./monitoring/mod.ts";
import type { WorkerInfo } from "./workers/types.ts";
import {
  type CountFailedTasksOptions,
  type FailedTaskDetails,
  TaskRecords,
} from "./records/mod.ts";
import type { ResolvedFederationOperationsOptions } from "./records/options.ts";
import { type TaskScheduleOptions, TaskSchedules } from "./schedules/mod.ts";
import type { TaskStatusTracker } from "./status/mod.ts";
import { FederationWebhooks } from "./webhooks/mod.ts";
import type { ResolvedWebhookOptions } from "./webhooks/options.ts";
import type { Webhook, WebhookInit } from "./webhooks/types.ts";

/**
 * What {@link OperatorFeatures} needs from the federation that wires it.
 * Internal.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export interface OperatorFeaturesPort<TContextData> {
  /** Where every feature keeps its records. */
  readonly kv: KvStore;
  /** The federation's tasks. */
  // deno-lint-ignore no-explicit-any
  readonly tasks: TaskStore<TContextData, any>;
  /** The federation's queue of each role. */
  readonly queues: Readonly<Partial<Record<QueueRole, MessageQueue>>>;
  /** The task queue, the outbox queue and the resolution policy. */
  readonly routing: TaskQueueRoutingOptions;
  /** Rebuilds vocabulary objects in the payloads of failed tasks. */
  readonly documentLoader: DocumentLoader;
  /** Subscribes to the dispatcher's lifecycle events; returns the unsubscriber. */
  readonly observe: (observer: MessageObserver) => () => void;
  /** The message metrics. */
  readonly metrics: MessageMetrics;
  /** The one path messages take into queues. */
  readonly producer: MessageProducer<TContextData>;
  /** The one path task messages take to the producer (the wiring's). */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
  /** The task status records (the wiring's: the enqueuer records into them). */
  readonly taskStatus: TaskStatusTracker;
  /** The record retentions and the PubSub updates are published on. */
  readonly records: ResolvedFederationOperationsOptions;
  /** The canonical origin, for schedules without a base URL. */
  readonly origin?: string | undefined;
  /** The outgoing requests of webhooks and probes. */
  readonly http: {
    readonly userAgent: string;
    readonly allowPrivateAddress: boolean;
    readonly maxRedirects: number;
  };
  /** The `webhooks` option, resolved. */
  readonly webhooks: ResolvedWebhookOptions;
  /** Which worker of this process runs each message (0.4.0). */
  readonly runners?: MessageRunners;
  /** The `hostHealth` option, resolved; `undefined` when off. */
  readonly hostHealth?: ResolvedHostHealthOptions | undefined;
  /** What the readiness check needs besides the above. */
  readonly health: {
    /** Lists the workers. */
    readonly listWorkers: () => Promise<WorkerInfo[]>;
    /** The class name of the store the application passed (`kv` may wrap it). */
    readonly kvType: string;
  };
}

/**
 * The operator features of one federation.  Internal.
 * @typeParam TContextData The context data type.
 * @since 0.4.0
 */
export class OperatorFeatures<TContextData> {
  /** Metrics, failed and completed tasks, quarantined messages. */
  readonly records: TaskRecords<TContextData>;
  /** Task status records and live updates. */
  readonly taskStatus: TaskStatusTracker;
  /** Cancellation markers and requests, and the runs watched for them. */
  readonly cancellations: TaskCancellations;
  /** The paused tasks and roles. */
  readonly pauses: FederationPauses;
  /** Recurring tasks. */
  readonly schedules: TaskSchedules<TContextData>;
  /** What Fedwork's own tasks are enqueued through. */
  readonly internalTasks: InternalTaskPort<TContextData>;
  /** Task batches. */
  readonly batches: FederationBatches<TContextData>;
  /** The webhooks. */
  readonly webhooks: FederationWebhooks<TContextData>;
  /** Remote-server health, when the `hostHealth` option is on. */
  readonly hostHealth?: FederationHostHealth<TContextData>;
  readonly #health: HealthChecker;
  readonly #canceller: TaskCanceller;
  readonly #port: OperatorFeaturesPort<TContextData>;

  /**
   * @param port What the features need from the federation.
   */
  constructor(port: OperatorFeaturesPort<TContextData>) {
    this.#port = port;
    const { kv, tasks, routing, queues, records: retention } = port;
    this.taskStatus = port.taskStatus;
    this.records = new TaskRecords({
      kv,
      pubsub: retention.pubsub,
      tasks,
      routing,
      documentLoader: port.documentLoader,
      observe: port.observe,
      metrics: port.metrics,
      producer: port.producer,
      taskEnqueuer: port.taskEnqueuer,
      taskStatus: port.taskStatus,
      retention: {
        failedMs: retention.failedTaskRetentionMs,
        completedMs: retention.completedTaskRetentionMs,
      },
      keepFailedDeliveries: retention.keepFailedDeliveries,
      checkDeliveryHost: async (inbox) => await this.hostHealth?.checkReplay(inbox),
      queueOf: (kind) => queues[kind],
    });
    this.cancellations = new TaskCancellations(kv, retention.pubsub, port.taskStatus.enabled);
    this.pauses = new FederationPauses(kv, retention.pubsub);
    this.#canceller = new TaskCanceller(port.taskStatus, this.cancellations);
    this.schedules = new TaskSchedules({
      kv,
      tasks,
      routing,
      taskEnqueuer: port.taskEnqueuer,
      ...(port.origin == null ? {} : { origin: port.origin }),
    });
    this.internalTasks = { tasks, routing, taskEnqueuer: port.taskEnqueuer };
    this.batches = new FederationBatches({
      kv,
      pubsub: retention.pubsub,
      internalTasks: this.internalTasks,
      observe: port.observe,
      retentionMs: retention.taskStatusRetentionMs > 0
        ? retention.taskStatusRetentionMs
        : 24 * 60 * 60 * 1000,
    });
    this.webhooks = new FederationWebhooks({
      kv,
      internalTasks: this.internalTasks,
      observe: port.observe,
      http: port.http,
      ...(port.runners == null ? {} : { runners: port.runners }),
    }, port.webhooks);
    this.#health = new HealthChecker({
      kv,
      pubsub: retention.pubsub,
      kvType: port.health.kvType,
      queues: () => this.#labelledQueues(),
      listWorkers: port.health.listWorkers,
    });
    if (port.hostHealth != null) {
      this.hostHealth = new FederationHostHealth({
        kv,
        outbox: hostHealthOutbox(queues.outbox, kv),
        producer: port.producer,
        internalTasks: this.internalTasks,
        http: {
          userAgent: port.http.userAgent,
          allowPrivateAddress: port.http.allowPrivateAddress,
        },
      }, port.hostHealth);
    }
  }

  /**
   * Writes out what the stopping workers counted, and the records of the
   * tasks they left running, for the other processes.
   */
  async flush(): Promise<void> {
    await Promise.all([this.records.throughput.flush(), this.taskStatus.flush()]);
  }

  cancelTask(id: string, options?: TaskCancelOptions): Promise<TaskCancelResult> {
    return this.#canceller.cancelTask(id, options);
  }

  listFailedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.records.listFailedTasks(options);
  }

  getFailedTask(id: string): Promise<FailedTaskDetails | undefined> {
    return this.records.getFailedTask(id);
  }

  retryFailedTask(id: string): Promise<TaskEnqueueResult> {
    return this.records.retryFailedTask(id);
  }

  discardFailedTask(id: string): Promise<boolean> {
    return this.records.discardFailedTask(id);
  }

  countFailedTasks(options?: CountFailedTasksOptions): Promise<Map<string, number>> {
    return this.records.countFailedTasks(options);
  }

  listCompletedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.records.listCompletedTasks(options);
  }

  scheduleTask<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options: TaskScheduleOptions,
  ): Promise<TaskSchedule> {
    return this.schedules.scheduleTask(task, data, options);
  }

  unscheduleTask(id: string): Promise<boolean> {
    return this.schedules.unscheduleTask(id);
  }

  listSchedules(): Promise<TaskSchedule[]> {
    return this.schedules.listSchedules();
  }

  getBatchStatus(id: string): Promise<BatchStatus | undefined> {
    return this.batches.getBatchStatus(id);
  }

  watchBatch(id: string, options?: WatchBatchOptions): AsyncIterable<BatchStatus> {
    return this.batches.watchBatch(id, options);
  }

  getQueueDepths(): Promise<QueueDepthEntry[]> {
    const { taskQueues, fallback } = this.#queueSources();
    return collectQueueDepths(this.#port.queues, taskQueues, fallback);
  }

  checkHealth(options?: HealthCheckOptions): Promise<HealthReport> {
    return this.#health.check(options);
  }

  #labelledQueues() {
    const { taskQueues, fallback } = this.#queueSources();
    return labelQueues(this.#port.queues, taskQueues, fallback);
  }

  /** The queues of tasks that have their own, and the tasks' fallback queue. */
  #queueSources(): {
    taskQueues: Map<string, MessageQueue>;
    fallback: MessageQueue | undefined;
  } {
    const { queues, routing, tasks } = this.#port;
    const taskQueues = new Map<string, MessageQueue>();
    for (const name of tasks.names) {
      const task = tasks.get(name)!;
      if (task.capabilities.length > 0) {
        // Tasks needing capabilities wait in a sibling queue for a capable worker.
        const queue = taskQueueOf(task, routing);
        if (queue != null) taskQueues.set(`${name} (needs ${task.capabilities.join(", ")})`, queue);
      } else if (task.queue != null) taskQueues.set(name, task.queue);
    }
    const fallback = queues.task == null && routing.resolution === "fallback"
      ? queues.outbox
      : undefined;
    return { taskQueues, fallback };
  }

  getThroughput(options?: GetThroughputOptions): Promise<ThroughputBucket[]> {
    return this.records.throughput.read(options);
  }

  addWebhook(init: WebhookInit): Promise<Webhook> {
    return this.webhooks.addWebhook(init);
  }

  listWebhooks(): Promise<Webhook[]> {
    return this.webhooks.listWebhooks();
  }

  removeWebhook(id: string): Promise<boolean> {
    return this.webhooks.removeWebhook(id);
  }

  enableWebhook(id: string): Promise<Webhook | undefined> {
    return this.webhooks.enableWebhook(id);
  }

  listUnhealthyHosts(): Promise<HostHealth[]> {
    return this.hostHealth?.listUnhealthyHosts() ?? Promise.resolve([]);
  }

  getHostHealth(host: string): Promise<HostHealth | undefined> {
    return this.hostHealth?.getHostHealth(host) ?? Promise.resolve(undefined);
  }

  releaseHost(host: string): Promise<boolean> {
    return this.hostHealth?.releaseHost(host) ?? Promise.resolve(false);
  }
}
