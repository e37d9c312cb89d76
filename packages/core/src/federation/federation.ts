import type { ActorKeyPair } from "../activitypub/actors/key-pairs.ts";
import {
  createPublicKeyFetcher,
  type PublicKeyFetcher,
} from "../activitypub/signatures/key-cache.ts";
import { InboxRefusalLog } from "../activitypub/inbox/refusal-log.ts";
import { hintFedifyLogCategory } from "./log-category-hint.ts";
import { ActorKeyPairsCache, loadActorKeyPairs } from "../activitypub/actors/key-pairs-cache.ts";
import { checkFetchArguments, handleFederationRequest } from "../activitypub/http/handler.ts";
import { handleOutboxPost } from "./outbox-listeners.ts";
import { attachClockSeam, clockOf } from "../time/clock-seam.ts";
import type { FederationFetchOptions } from "./api.ts";
import { InboxContextImpl } from "./inbox-context.ts";
import { RequestContextImpl } from "./request-context.ts";
import type { Tracer } from "@opentelemetry/api";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { type ContextHost, ContextImpl } from "./context.ts";
import type {
  Context,
  InboxContext,
  RequestContext,
  TaskDefinitionManyOptions,
  TaskDefinitionOptions,
} from "./context-api.ts";
import { Outbox } from "../activitypub/outbox/outbox.ts";
import { DeliveryHostPolicy } from "../activitypub/outbox/host-policy.ts";
import { FederatableImpl } from "./federatable.ts";
import { Inbox } from "../activitypub/inbox/inbox.ts";
import type { Message } from "./message.ts";
import {
  type FederationOptions,
  type ResolvedFederationOptions,
  resolveFederationOptions,
} from "./options.ts";
import type { QueueRole } from "../processing/queue-roles.ts";
import { createRegistry } from "./registry.ts";
import type { FederationRegistry } from "./registry-api.ts";
import { getFedworkTracer } from "../processing/tracing.ts";
import { MessageProducer } from "../processing/producer.ts";
import { MessageDispatcher } from "../processing/dispatcher.ts";
import { MessageRunners } from "../processing/message-runners.ts";
import { checkDeliveryCount } from "../processing/delivery-limit.ts";
import {
  MessageEventHub,
  type MessageEventListener,
  type MessageEventType,
} from "../processing/events.ts";
import type { Outcome } from "../processing/outcome.ts";
import {
  type FederationCloseOptions,
  listWorkers,
  startWorkers,
  type WorkerInfo,
  WorkerShutdown,
} from "../operator/workers/mod.ts";
import type { HealthCheckOptions, HealthReport } from "../operator/health/mod.ts";
import { batchSizesForQueues, queuesForRoles } from "../tasks/listen-queues.ts";
import { createTaskMessageHandler } from "../tasks/handler.ts";
import type { TaskCancelOptions, TaskCancelResult } from "../operator/cancellation/mod.ts";
import { OperatorFeatures } from "../operator/features.ts";
import type { PausableTask, PausedWork } from "../operator/pauses/mod.ts";
import {
  checkCapabilityQueue,
  taskQueueOf,
  type TaskQueueRoutingOptions,
} from "../tasks/routing.ts";
import { createFederationMessageHandler } from "../activitypub/message-kinds.ts";
import { TaskContextImpl } from "./task-context.ts";
import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { TaskResultValue } from "../tasks/result.ts";
import type { TaskStatus, TaskUpdate } from "../operator/status/store.ts";
import type { WatchTaskOptions } from "../operator/status/mod.ts";
import type { TaskDefinition, TaskEnqueueResult } from "../tasks/definition.ts";
import { isSupersededDebounce } from "../tasks/debounce.ts";
import { checkLimitStore } from "../tasks/limit-options.ts";
import { TaskRunLimiter } from "../tasks/limited-run.ts";
import type { ListTaskRecordsOptions, TaskRecordPage } from "../operator/records/record-store.ts";
import type { TaskSchedule } from "../operator/schedules/mod.ts";
import type { CountFailedTasksOptions, FailedTaskDetails } from "../operator/records/mod.ts";
import { TaskStatusTracker } from "../operator/status/mod.ts";
import { TaskEnqueuer } from "../tasks/enqueuer.ts";
import {
  createStepObserver,
  publishStepActivity,
  readTaskSteps,
  type SendEventOptions,
  type SendEventResult,
  sendStepEvent,
  type TaskStepInfo,
} from "../tasks/steps/mod.ts";
import { createStepsWiring } from "./steps-wiring.ts";
import type { TaskScheduleOptions } from "../operator/schedules/mod.ts";
import { MessageMetrics } from "../processing/metrics.ts";
import type { QueueDepthEntry } from "../operator/monitoring/mod.ts";
import type { GetThroughputOptions, ThroughputBucket } from "../processing/throughput.ts";
import type { HostHealth } from "../operator/host-health/types.ts";
import type { Webhook, WebhookInit } from "../operator/webhooks/types.ts";
import type { FederationBatches } from "../operator/batches/batches.ts";
import type { BatchStatus, WatchBatchOptions } from "../operator/batches/types.ts";
import type {
  Federation,
  FederationStartQueueOptions,
  ProcessQueuedMessageOptions,
} from "./api.ts";
import { neverAborted } from "../processing/never-aborted.ts";

export type { Federation, FederationStartQueueOptions, ProcessQueuedMessageOptions };

/**
 * The {@link Federation} implementation.  Internal: use
 * {@link createFederation} or a builder.
 * @since 0.1.0
 */
export class FederationImpl<TContextData> extends FederatableImpl<TContextData>
  implements Federation<TContextData>, ContextHost<TContextData> {
  readonly options: ResolvedFederationOptions;
  /** Decides what becomes of every message.  Internal. */
  readonly dispatcher: MessageDispatcher<TContextData>;
  readonly #events = new MessageEventHub();
  /** The step runners' host and the wake-up of waiting tasks (0.4.0). */
  readonly #steps: ReturnType<typeof createStepsWiring>;
  readonly #tracer: Tracer;
  readonly #listening = new Set<MessageQueue>();
  /** Which worker of this process runs each message (0.4.0). */
  readonly #runners = new MessageRunners();
  readonly #shutdown = new WorkerShutdown();
  /** Task status records and live updates.  Internal. */
  readonly taskStatus: TaskStatusTracker;
  /** The operator features the operator methods forward to.  Internal. */
  readonly operator: OperatorFeatures<TContextData>;
  /** Task batches (the operator's), for contexts.  Internal. */
  readonly batches: FederationBatches<TContextData>;
  /** The one path messages take into queues.  Internal. */
  readonly producer: MessageProducer<TContextData>;
  /** The one path task messages take to the producer.  Internal. */
  readonly taskEnqueuer: TaskEnqueuer<TContextData>;
  /** Fetches and caches remote public keys.  Internal. */
  readonly fetchPublicKey: PublicKeyFetcher;
  /** Logs refused inbox requests at info, once per host per minute.  Internal. */
  readonly inboxRefusals: InboxRefusalLog = new InboxRefusalLog();
  readonly #senderKeys: ActorKeyPairsCache<Context<TContextData>>;
  /** Takes a verified inbox message: the inbox's `receive()`.  Internal. */
  readonly receive: Inbox<TContextData, InboxContextImpl<TContextData>>["receive"];
  /** Takes verified inbox messages and runs queued ones.  Internal. */
  readonly inbox: Inbox<TContextData, InboxContextImpl<TContextData>>;
  /** Sends activities and runs fan-outs and deliveries.  Internal. */
  readonly outbox: Outbox<TContextData, Context<TContextData>>;
  /** The task queue, the outbox queue and the resolution policy. */
  get #routing(): TaskQueueRoutingOptions {
    const { queues, taskQueueResolution: resolution } = this.options;
    return { taskQueue: queues.task, outboxQueue: queues.outbox, resolution };
  }

  /**
   * @param options The federation options.
   * @param registry The registrations (a copy, when built from a builder).
   */
  constructor(
    options: FederationOptions<TContextData>,
    registry: FederationRegistry<TContextData> = createRegistry(),
  ) {
    super(registry);
    this.options = resolveFederationOptions(options);
    hintFedifyLogCategory();
    this.#tracer = getFedworkTracer(this.options.tracerProvider);
    this.dispatcher = new MessageDispatcher(this.#tracer, this.#events, {
      timeoutGracePeriodMs: this.options.timeoutGracePeriodMs,
      maxDeliveries: this.options.maxDeliveries,
    });
    this.fetchPublicKey = createPublicKeyFetcher({
      kv: this.options.kv,
      documentLoader: this.options.documentLoader,
    });
    this.#senderKeys = new ActorKeyPairsCache((ctx, identifier) =>
      this.getActorKeyPairs(ctx, identifier)
    );
    const { queues } = this.options;
    const limiter = new TaskRunLimiter(this.options.kv);
    this.dispatcher.register(
      "outbox",
      createFederationMessageHandler<TContextData, "outbox">("outbox", {
        run: (message, run) => this.outbox.deliver(message, run),
        retryPolicy: () => this.options.outboxRetryPolicy,
        timeout: () => this.options.outboxTimeoutMs,
        queue: () => queues.outbox,
      }),
    );
    this.dispatcher.register(
      "fanout",
      createFederationMessageHandler<TContextData, "fanout">("fanout", {
        run: (message, run) => this.outbox.fanOut(message, run),
        retryPolicy: () => this.options.outboxRetryPolicy,
        timeout: () => this.options.outboxTimeoutMs,
        queue: () => queues.fanout,
      }),
    );
    this.#steps = createStepsWiring({
      kv: this.options.kv,
      documentLoader: this.options.documentLoader,
      taskStatusRetentionMs: this.options.taskStatusRetentionMs,
      waitedActivityTypeIds: this.options.waitedActivityTypeIds,
      tracer: this.#tracer,
      tasks: this.registry.tasks,
      routing: () => this.#routing,
      taskEnqueuer: () => this.taskEnqueuer,
      taskStatus: () => this.taskStatus,
    });
    this.dispatcher.register(
      "task",
      createTaskMessageHandler({
        registry: this.registry.tasks,
        createContext: (message, baseUrl, task, contextData) =>
          new TaskContextImpl(this, baseUrl, contextData, task, message, this.#steps.host),
        documentLoader: this.options.documentLoader,
        retryPolicy: this.options.taskRetryPolicy,
        timeoutMs: this.options.taskTimeoutMs,
        timeoutGraceMs: this.options.timeoutGracePeriodMs,
        retryQueue: (task) => taskQueueOf(task, this.#routing),
        // Not async: on every task run; only a batch's completion task has
        // a batch record to swap first.
        onStart: (message) =>
          message.batch?.role === "completion"
            ? this.batches.starting(message).then(() => this.taskStatus.started(message))
            : this.taskStatus.started(message),
        watchCancellation: (message, signal, controller) =>
          this.operator.cancellations.begin(message.id, signal, controller),
        isSuperseded: (message) => isSupersededDebounce(this.options.kv, message),
        beginLimitedRun: (task, message, data) => limiter.begin(task, message, data),
        reportProgress: async (message, progress) => {
          await this.taskStatus.progress(message, progress);
          await this.operator.webhooks.progress(message, progress);
        },
        steps: this.#steps.host,
      }),
    );
    this.dispatcher.observe(createStepObserver(this.options.kv, this.#steps.wake));
    this.outbox = new Outbox<TContextData, Context<TContextData>>({
      queues,
      fanoutDeliveries: this.options.fanoutDeliveries,
      delivery: {
        kv: this.options.kv,
        userAgent: this.options.userAgent,
        allowPrivateAddress: this.options.allowPrivateAddress,
        remoteRequests: this.options.remoteRequests,
        firstKnock: this.options.firstKnock,
        permanentFailureStatusCodes: this.options.permanentFailureStatusCodes,
      },
      registry: this.registry,
      hostHealth: () => this.operator.hostHealth,
      hostPolicy: this.options.hostPolicy == null
        ? undefined
        : new DeliveryHostPolicy(this.options.hostPolicy, this.options.kv, queues.outbox != null),
      createContext: (baseUrl, contextData) => this.createContext(baseUrl, contextData),
      getKeyPairs: (ctx, identifier) => this.#senderKeys.get(ctx, identifier),
      enqueue: (queue, messages, contextData, options) =>
        this.enqueue(queue, messages, contextData, options),
      dispatch: (message, run, options) => this.dispatcher.dispatch(message, run, options),
    });
    const metrics = new MessageMetrics(this.options.meterProvider);
    this.producer = new MessageProducer({
      tracer: this.#tracer,
      metrics,
      ...(this.options.manuallyStartQueue
        ? {}
        : { start: (contextData: TContextData) => this.startQueue(contextData) }),
    });
    this.inbox = new Inbox<TContextData, InboxContextImpl<TContextData>>({
      queue: queues.inbox,
      registry: this.registry,
      documentLoader: this.options.documentLoader,
      budget: this.options.remoteDocuments.budget,
      createContext: (message, contextData, signal) =>
        new InboxContextImpl(
          this,
          new URL(message.baseUrl),
          contextData,
          message.identifier,
          message.activity as Record<string, unknown>,
          signal,
        ),
      producer: this.producer,
      dispatcher: this.dispatcher,
      retryPolicy: () => this.options.inboxRetryPolicy,
      timeoutMs: () => this.options.inboxTimeoutMs,
      verified: async (activity, signer) => {
        await publishStepActivity(
          this.options.kv,
          this.#steps.wake,
          activity,
          signer,
          this.#steps.activityWaits,
        );
      },
    });
    this.receive = this.inbox.receive.bind(this.inbox);
    this.dispatcher.register("inbox", this.inbox.handler());
    const { kv, pubsub } = this.options;
    // The wiring owns the task enqueuer: contexts, schedules, replays and
    // Fedwork's own tasks enqueue through it, straight to the producer.
    this.taskStatus = new TaskStatusTracker(
      kv,
      pubsub,
      this.options.taskStatusRetentionMs,
      this.#runners,
    );
    this.taskEnqueuer = new TaskEnqueuer({
      kv,
      deduplicationTtlMs: this.options.taskDeduplicationTtlMs,
      producer: this.producer,
      status: this.taskStatus,
      metrics,
      now: clockOf(options),
    });
    this.operator = new OperatorFeatures({
      kv,
      tasks: this.registry.tasks,
      queues,
      routing: this.#routing,
      documentLoader: this.options.documentLoader,
      observe: (observer) => this.dispatcher.observe(observer),
      metrics,
      producer: this.producer,
      taskEnqueuer: this.taskEnqueuer,
      taskStatus: this.taskStatus,
      records: this.options,
      origin: this.options.origin,
      http: {
        userAgent: this.options.userAgent,
        allowPrivateAddress: this.options.allowPrivateAddress,
        maxRedirects: this.options.remoteRequests.maxRedirects,
      },
      webhooks: this.options.webhooks,
      runners: this.#runners,
      hostHealth: this.options.hostHealth,
      health: {
        listWorkers: () => listWorkers(kv),
        kvType: options.kv?.constructor?.name ?? "Object",
      },
    });
    attachClockSeam(options, {
      runSchedulesAt: (now) => this.operator.schedules.runDueAt(now),
    });
    this.batches = this.operator.batches;
    for (const name of this.registry.tasks.names) {
      const task = this.registry.tasks.get(name)!;
      checkCapabilityQueue(name, task.capabilities, task.queue, this.#routing);
      checkLimitStore(name, task, this.options.kv);
    }
  }

  override defineTask<
    TSchema extends StandardSchemaV1,
    TResult extends TaskResultValue | void = void,
  >(
    name: string,
    options: TaskDefinitionOptions<TContextData, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  override defineTask<
    TSchema extends StandardSchemaV1,
    TResult extends TaskResultValue | void = void,
  >(
    name: string,
    options: TaskDefinitionManyOptions<TContextData, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  >;
  override defineTask<
    TSchema extends StandardSchemaV1,
    TResult extends TaskResultValue | void = void,
  >(
    name: string,
    options:
      | TaskDefinitionOptions<TContextData, TSchema, TResult>
      | TaskDefinitionManyOptions<TContextData, TSchema, TResult>,
  ): TaskDefinition<
    TContextData,
    StandardSchemaV1.InferOutput<TSchema>,
    StandardSchemaV1.InferInput<TSchema>,
    TResult
  > {
    if (options != null && typeof options === "object") {
      checkCapabilityQueue(name, options.capabilities, options.queue, this.#routing);
      checkLimitStore(name, options, this.options.kv);
    }
    return super.defineTask(name, options as TaskDefinitionOptions<TContextData, TSchema, TResult>);
  }

  getTaskSteps(id: string): Promise<TaskStepInfo[]> {
    return readTaskSteps(this.options.kv, id);
  }

  sendEvent<TData>(event: string, options: SendEventOptions<TData>): Promise<SendEventResult> {
    return sendStepEvent(this.options.kv, this.#steps.wake, event, options);
  }

  getTaskStatus(id: string): Promise<TaskStatus | undefined>;
  getTaskStatus<TResult>(
    task: TaskDefinition<TContextData, unknown, unknown, TResult>,
    id: string,
  ): Promise<TaskStatus<TResult> | undefined>;
  getTaskStatus(
    taskOrId: string | TaskDefinition<TContextData, unknown, unknown>,
    id?: string,
  ): Promise<TaskStatus | undefined> {
    return typeof taskOrId === "string"
      ? this.taskStatus.getTaskStatus(taskOrId)
      : this.taskStatus.getTaskStatus(taskOrId, id!);
  }

  getBatchStatus(id: string): Promise<BatchStatus | undefined> {
    return this.operator.getBatchStatus(id);
  }

  watchBatch(id: string, options?: WatchBatchOptions): AsyncIterable<BatchStatus> {
    return this.operator.watchBatch(id, options);
  }

  watchTask(id: string, options?: WatchTaskOptions): AsyncIterable<TaskUpdate>;
  watchTask<TResult>(
    task: TaskDefinition<TContextData, unknown, unknown, TResult>,
    id: string,
    options?: WatchTaskOptions,
  ): AsyncIterable<TaskUpdate<TResult>>;
  watchTask(
    taskOrId: string | TaskDefinition<TContextData, unknown, unknown>,
    idOrOptions?: string | WatchTaskOptions,
    options?: WatchTaskOptions,
  ): AsyncIterable<TaskUpdate> {
    return typeof taskOrId === "string"
      ? this.taskStatus.watchTask(taskOrId, idOrOptions as WatchTaskOptions)
      : this.taskStatus.watchTask(taskOrId, idOrOptions as string, options);
  }

  watchTasks(options?: WatchTaskOptions): AsyncIterable<TaskUpdate> {
    return this.taskStatus.watchTasks(options);
  }

  /**
   * Answers a POST to an outbox, for the outbox listeners.  Internal.
   * @param ctx The request's context.
   * @param identifier The outbox owner's identifier.
   * @param fallbacks The 404 and 401 answers.
   * @returns The response.
   */
  handleOutboxPost(
    ctx: RequestContext<TContextData>,
    identifier: string,
    fallbacks: {
      readonly onNotFound: (request: Request) => Response | Promise<Response>;
      readonly onUnauthorized: (request: Request) => Response | Promise<Response>;
    },
  ): Promise<Response> {
    return handleOutboxPost(this, ctx, identifier, fallbacks);
  }

  fetch(request: Request, options: FederationFetchOptions<TContextData>): Promise<Response> {
    hintFedifyLogCategory();
    try {
      checkFetchArguments(request, options);
    } catch (error) {
      return Promise.reject(error);
    }
    return handleFederationRequest(this, this.createContext(request, options.contextData), options);
  }

  /**
   * Creates the inbox context an idempotency key callback gets.  Internal.
   * @param baseUrl The base URL the activity was received at.
   * @param data The context data.
   * @param recipient The personal inbox's identifier, or `null`.
   * @param activity The activity as received.
   * @returns The context.
   */
  createInboxContext(
    baseUrl: URL,
    data: TContextData,
    recipient: string | null,
    activity: Readonly<Record<string, unknown>>,
  ): InboxContext<TContextData> {
    return new InboxContextImpl(this, baseUrl, data, recipient, activity);
  }

  async getActorKeyPairs(ctx: Context<TContextData>, identifier: string): Promise<ActorKeyPair[]> {
    return await loadActorKeyPairs(this.registry.actor?.keyPairsDispatcher, ctx, identifier);
  }

  on<T extends MessageEventType>(type: T, listener: MessageEventListener<T>): () => void {
    return this.#events.on(type, listener);
  }

  get federation(): Federation<TContextData> {
    return this;
  }

  get canonicalOrigin(): string | undefined {
    return this.options.origin;
  }

  get documentLoader(): ResolvedFederationOptions["documentLoader"] {
    return this.options.documentLoader;
  }

  get tracerProvider(): ResolvedFederationOptions["tracerProvider"] {
    return this.options.tracerProvider;
  }

  createContext(baseUrl: URL, contextData: TContextData): Context<TContextData>;
  createContext(request: Request, contextData: TContextData): RequestContext<TContextData>;
  createContext(
    baseUrlOrRequest: URL | Request,
    contextData: TContextData,
  ): Context<TContextData> | RequestContext<TContextData> {
    if (baseUrlOrRequest instanceof URL) {
      return new ContextImpl(this, baseUrlOrRequest, contextData);
    }
    if (typeof Request !== "undefined" && baseUrlOrRequest instanceof Request) {
      return new RequestContextImpl(this, baseUrlOrRequest, contextData);
    }
    throw new TypeError("createContext() needs a base URL (a URL object) or a Request.");
  }

  /**
   * The queues to listen to for the given roles, each with the roles it
   * serves (see `queuesForRoles()` in tasks/listen-queues.ts).  Internal.
   * @param roles The roles.
   * @param capabilities The worker's capabilities.
   * @returns The queues.
   */
  queuesForRoles(
    roles: readonly QueueRole[],
    capabilities: ReadonlySet<string> = new Set(),
  ): Map<MessageQueue, QueueRole[]> {
    const { queues, taskQueueResolution: resolution } = this.options;
    return queuesForRoles(
      queues,
      {
        taskQueue: queues.task,
        outboxQueue: queues.outbox,
        resolution,
      },
      this.registry.tasks,
      roles,
      capabilities,
    );
  }

  startQueue(
    contextData: TContextData,
    options: FederationStartQueueOptions = {},
  ): Promise<void> {
    hintFedifyLogCategory();
    if (this.#shutdown.closed) {
      return Promise.reject(
        new TypeError("startQueue() was called after close(): this federation is closed."),
      );
    }
    return this.#shutdown.track(startWorkers(
      {
        dispatcher: this.dispatcher,
        kv: this.options.kv,
        taskQueueResolution: this.options.taskQueueResolution,
        listening: this.#listening,
        queuesForRoles: (roles, capabilities) => this.queuesForRoles(roles, capabilities),
        batchSizesForQueues: (capabilities) =>
          batchSizesForQueues(
            {
              taskQueue: this.options.queues.task,
              outboxQueue: this.options.queues.outbox,
              resolution: this.options.taskQueueResolution,
            },
            this.registry.tasks,
            capabilities,
          ),
        listenForCancellations: (signal) => this.operator.cancellations.listen(signal),
        runSchedules: (signal) => this.operator.schedules.run(signal),
        // What the stopping workers counted, and the records of tasks they
        // left running, reach the other processes now.
        flush: () => this.operator.flush(),
        shutdown: this.#shutdown,
        pauses: this.operator.pauses,
        runners: this.#runners,
        ...(this.options.machineId == null ? {} : { machineId: this.options.machineId }),
      },
      contextData,
      options,
    ));
  }

  close(options?: FederationCloseOptions): Promise<void> {
    return this.#shutdown.close(options);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  listWorkers(): Promise<WorkerInfo[]> {
    return listWorkers(this.options.kv);
  }

  async processQueuedMessage(
    contextData: TContextData,
    message: unknown,
    options: ProcessQueuedMessageOptions = {},
  ): Promise<void> {
    const deliveryCount = checkDeliveryCount(options?.deliveryCount, "processQueuedMessage()");
    await this.dispatcher.dispatch(
      message,
      { contextData, signal: neverAborted() },
      deliveryCount === undefined ? {} : { deliveryCount },
    );
  }

  processQueuedTask(
    contextData: TContextData,
    message: unknown,
    options?: ProcessQueuedMessageOptions,
  ): Promise<void> {
    return this.processQueuedMessage(contextData, message, options);
  }

  /**
   * Processes one message without a source queue and returns its outcome.
   * Internal.
   * @param message The message.
   * @param contextData The context data.
   * @returns The outcome.
   */
  dispatch(message: unknown, contextData: TContextData): Promise<Outcome> {
    return this.dispatcher.dispatch(message, { contextData, signal: neverAborted() });
  }

  /**
   * Enqueues messages through the producer, starting the workers first
   * unless `manuallyStartQueue` is set.  Internal.
   * @param queue The queue.
   * @param messages The messages.
   * @param contextData The context data, for starting the workers.
   * @param options The enqueue options.
   */
  enqueue(
    queue: MessageQueue,
    messages: readonly Message[],
    contextData: TContextData,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    return this.producer.produce(queue, messages, options, { start: { contextData } });
  }

  // The operator methods (records, schedules, monitoring, webhooks, host
  // health) forward to the operator features: see operator/features.ts.

  cancelTask(id: string, options?: TaskCancelOptions): Promise<TaskCancelResult> {
    return this.operator.cancelTask(id, options);
  }

  pauseTask(task: PausableTask): Promise<void> {
    return this.operator.pauses.pauseTask(task);
  }

  resumeTask(task: PausableTask): Promise<void> {
    return this.operator.pauses.resumeTask(task);
  }

  pauseRole(role: QueueRole): Promise<void> {
    return this.operator.pauses.pauseRole(role);
  }

  resumeRole(role: QueueRole): Promise<void> {
    return this.operator.pauses.resumeRole(role);
  }

  listPaused(): Promise<PausedWork> {
    return this.operator.pauses.listPaused();
  }

  listFailedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.operator.listFailedTasks(options);
  }

  getFailedTask(id: string): Promise<FailedTaskDetails | undefined> {
    return this.operator.getFailedTask(id);
  }

  retryFailedTask(id: string): Promise<TaskEnqueueResult> {
    return this.operator.retryFailedTask(id);
  }

  discardFailedTask(id: string): Promise<boolean> {
    return this.operator.discardFailedTask(id);
  }

  countFailedTasks(options?: CountFailedTasksOptions): Promise<Map<string, number>> {
    return this.operator.countFailedTasks(options);
  }

  listCompletedTasks(options?: ListTaskRecordsOptions): Promise<TaskRecordPage> {
    return this.operator.listCompletedTasks(options);
  }

  scheduleTask<TData, TInput>(
    task: TaskDefinition<TContextData, TData, TInput>,
    data: NoInfer<TInput>,
    options: TaskScheduleOptions,
  ): Promise<TaskSchedule> {
    return this.operator.scheduleTask(task, data, options);
  }

  unscheduleTask(id: string): Promise<boolean> {
    return this.operator.unscheduleTask(id);
  }

  listSchedules(): Promise<TaskSchedule[]> {
    return this.operator.listSchedules();
  }

  getQueueDepths(): Promise<QueueDepthEntry[]> {
    return this.operator.getQueueDepths();
  }

  getThroughput(options?: GetThroughputOptions): Promise<ThroughputBucket[]> {
    return this.operator.getThroughput(options);
  }

  checkHealth(options?: HealthCheckOptions): Promise<HealthReport> {
    return this.operator.checkHealth(options);
  }

  addWebhook(init: WebhookInit): Promise<Webhook> {
    return this.operator.addWebhook(init);
  }

  listWebhooks(): Promise<Webhook[]> {
    return this.operator.listWebhooks();
  }

  removeWebhook(id: string): Promise<boolean> {
    return this.operator.removeWebhook(id);
  }

  enableWebhook(id: string): Promise<Webhook | undefined> {
    return this.operator.enableWebhook(id);
  }

  listUnhealthyHosts(): Promise<HostHealth[]> {
    return this.operator.listUnhealthyHosts();
  }

  getHostHealth(host: string): Promise<HostHealth | undefined> {
    return this.operator.getHostHealth(host);
  }

  releaseHost(host: string): Promise<boolean> {
    return this.operator.releaseHost(host);
  }
}

/**
 * Creates a federation.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @param options The options; `kv` is required.
 * @returns The federation.
 * @throws {FederationOptionError} When an option is missing or invalid.
 * @example
 * ```ts
 * const federation = createFederation<{ db: Db }>({
 *   kv: new MemoryKvStore(),
 *   queue: new InProcessMessageQueue(),
 * });
 * ```
 * @since 0.1.0
 */
export function createFederation<TContextData>(
  options: FederationOptions<TContextData>,
): Federation<TContextData> {
  return new FederationImpl(options);
}
