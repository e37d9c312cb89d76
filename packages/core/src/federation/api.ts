// The Federation interface and its option types: interfaces only, so that
// what an application programs against can be read without the wiring
// (federation.ts implements it).
import type { SendEventOptions, SendEventResult } from "../tasks/steps/types.ts";
import type { TaskStepInfo } from "../tasks/steps/view.ts";
import type { PauseOperations } from "../operator/pauses/mod.ts";
import type { MessageEventListener, MessageEventType } from "../processing/events.ts";
import type { HostHealthOperations } from "../operator/host-health/mod.ts";
import type { TaskOperations } from "../operator/records/mod.ts";
import type { TaskStatusOperations } from "../operator/status/mod.ts";
import type { TaskCancelOperations } from "../operator/cancellation/mod.ts";
import type { BatchStatusOperations } from "../operator/batches/types.ts";
import type { WebhookOperations } from "../operator/webhooks/mod.ts";
import type { Context, RequestContext } from "./context-api.ts";
import type { Federatable } from "./federatable-api.ts";
import type { QueueMonitoring } from "../operator/monitoring/mod.ts";
import type { HealthOperations } from "../operator/health/mod.ts";
import type {
  FederationCloseOptions,
  FederationStartQueueOptions,
  WorkerInfo,
} from "../operator/workers/mod.ts";

/**
 * Options for {@link Federation.processQueuedMessage}: what the platform
 * that delivered the message knows about it.
 * @since 0.4.0
 */
export interface ProcessQueuedMessageOptions {
  /**
   * How many times the platform has handed this message out, this time
   * included (1 the first time): Cloudflare Queues' `message.attempts`,
   * say.  A message handed out more than `maxDeliveries` times without an
   * outcome is quarantined instead of run (see `maxDeliveries` in the
   * federation's options).  Unknown (never quarantined) by default.  A
   * positive integer.
   */
  readonly deliveryCount?: number;
}

export type { FederationCloseOptions, FederationStartQueueOptions };

/**
 * An ActivityPub federation: registrations (from {@link Federatable}), the
 * contexts that build URIs and send activities, and the queue workers.
 * @typeParam TContextData The type of the application data every context
 *                         carries.
 * @since 0.1.0
 */
export interface Federation<TContextData>
  extends
    Federatable<TContextData>,
    TaskOperations<TContextData>,
    TaskStatusOperations,
    TaskCancelOperations,
    PauseOperations,
    BatchStatusOperations,
    QueueMonitoring,
    HealthOperations,
    WebhookOperations,
    HostHealthOperations,
    AsyncDisposable {
  /**
   * Creates a context for a base URL.
   * @param baseUrl The server's base URL.
   * @param contextData The application data.
   * @returns The context.
   * @example
   * ```ts
   * const ctx = federation.createContext(new URL("https://example.com/"), { db });
   * ctx.getActorUri("alice"); // https://example.com/users/alice
   * ```
   */
  createContext(baseUrl: URL, contextData: TContextData): Context<TContextData>;
  /**
   * Creates a context for an incoming request: a {@link RequestContext},
   * which also tells who signed the request.
   * @param request The request.
   * @param contextData The application data.
   * @returns The context.
   * @since 0.2.0
   */
  createContext(request: Request, contextData: TContextData): RequestContext<TContextData>;

  /**
   * Sends an event to the tasks that wait for it with
   * `ctx.step.waitForEvent(id, { event, key })`, in any process sharing
   * this federation's key–value store and queues: they resume with its
   * data.  The event is also kept for its `keepFor` window (1 hour by
   * default), so that a wait starting after it still sees it.
   * @param event The event's name.
   * @param options The key, the data and the window.
   * @returns How many waiting tasks were woken.
   * @throws {TypeError} When the name or an option is invalid.
   * @throws {TaskPayloadEncodingError} When the data cannot be encoded or
   *         is over 64 KiB encoded.
   * @example
   * ```ts ignore
   * await federation.sendEvent("import-approved", { key: importId, data: { by: "admin" } });
   * ```
   * @since 0.4.0
   */
  sendEvent<TData>(event: string, options: SendEventOptions<TData>): Promise<SendEventResult>;

  /**
   * The durable steps of a task (`ctx.step`), in the order its code runs
   * them: those recorded, and the one it sleeps or waits at, if any.
   * Read from the step records, which are deleted when the task ends.
   * @param id The task's id.
   * @returns The steps; none for a task without steps or that ended.
   * @example
   * ```ts ignore
   * const current = (await federation.getTaskSteps(id)).find((step) => step.state !== "done");
   * ```
   * @since 0.4.0
   */
  getTaskSteps(id: string): Promise<TaskStepInfo[]>;

  /**
   * Answers an HTTP request with what the federation registered: actors,
   * objects and collections (as `application/activity+json` to requests
   * that ask for JSON-LD), inbox POSTs (verified, deduplicated, queued:
   * 202), `/.well-known/webfinger`, `/.well-known/nodeinfo` and the NodeInfo
   * document.  Anything else goes to `onNotFound`.  A Fetch API handler:
   * give it to `Deno.serve()`, `Bun.serve()` or a Node.js adapter.
   * @param request The request.
   * @param options The context data and what to answer when the
   *                federation does not (not found, not acceptable,
   *                unauthorized).
   * @returns The response.
   * @since 0.2.0
   * @example
   * ```ts
   * Deno.serve((request) =>
   *   federation.fetch(request, {
   *     contextData: undefined,
   *     onNotAcceptable: () => new Response(renderHtml(), { headers: { "Content-Type": "text/html" } }),
   *   })
   * );
   * ```
   */
  fetch(request: Request, options: FederationFetchOptions<TContextData>): Promise<Response>;

  /**
   * Starts the queue workers and resolves when they stop (after
   * `options.signal` aborts, or `close()` stopped them).  Needed with
   * `manuallyStartQueue: true`, typically in a separate worker process.
   * @param contextData The application data of the workers' contexts.
   * @param options The abort signal and the role to start.
   * @returns Resolves when every started worker has stopped.
   * @throws {TypeError} When `options.queue` is not a queue role, or
   *         (since 0.4.0) when called after `close()`.
   */
  startQueue(contextData: TContextData, options?: FederationStartQueueOptions): Promise<void>;

  /**
   * Stops this process's workers (every `startQueue()` call, and the
   * workers started on the first enqueue): they take no more messages at
   * once; running handlers get `options.grace` to finish, then their
   * signals abort and each message whose handler ends so goes back to its
   * queue unchanged (no attempt spent) for another worker.  Resolves once
   * every `startQueue()` has resolved; `startQueue()` is refused
   * afterwards.  Calling it again (a second `SIGTERM`) may shorten the
   * grace.  It does not close the queues, the key–value store or the
   * pub/sub you passed to `createFederation()`: they are yours (you may
   * share a client between them); dispose of them after it, e.g. with
   * `await using`.  See also `closeOnSignals()`.
   * @param options The grace.
   * @returns Resolves when the workers have stopped.
   * @throws {UnknownOptionError} When an option's name is unknown.
   * @throws {TypeError} When `grace` is not a duration.
   * @throws {RangeError} When `grace` is negative or too long.
   * @since 0.4.0
   * @example
   * ```ts ignore
   * const workers = federation.startQueue(undefined);
   * // … on SIGTERM:
   * await federation.close({ grace: { seconds: 20 } });
   * await workers; // already resolved
   * ```
   */
  close(options?: FederationCloseOptions): Promise<void>;

  /**
   * The same as {@link Federation.close} with the default grace (20
   * seconds), for `await using federation = createFederation(…)`.
   * @since 0.4.0
   */
  [Symbol.asyncDispose](): Promise<void>;

  /**
   * Processes one queue message as a worker would, retrying on failure.
   * For queue adapters that deliver messages themselves (e.g. push-based
   * platforms).  A retry is enqueued into the message kind's queue.
   * @param contextData The application data.
   * @param message The message, as the queue handed it out (typed
   *                `unknown` since 0.4.0: it is read as input from
   *                outside, and one that is not a Fedwork message is
   *                dropped and logged).
   * @param options How many times the platform handed it out (since
   *                0.4.0).
   * @throws {RetryNotStoredError} When the message failed and its retry
   *         could not be enqueued: the caller must keep the message and
   *         hand it over again later.
   * @throws {RangeError} When `deliveryCount` is not a positive integer.
   */
  processQueuedMessage(
    contextData: TContextData,
    message: unknown,
    options?: ProcessQueuedMessageOptions,
  ): Promise<void>;

  /**
   * Fedify's name for {@link Federation.processQueuedMessage}, so that a
   * Fedify app that hands its queue's messages over itself (a Cloudflare
   * Worker's `queue()` handler) ports unchanged.
   * @param contextData The application data.
   * @param message The message, as it was enqueued.
   * @param options How many times the platform handed it out (since
   *                0.4.0).
   * @throws {RetryNotStoredError} When the message failed and its retry
   *         could not be enqueued.
   * @throws {RangeError} When `deliveryCount` is not a positive integer.
   * @since 0.3.0
   */
  processQueuedTask(
    contextData: TContextData,
    message: unknown,
    options?: ProcessQueuedMessageOptions,
  ): Promise<void>;

  /**
   * Listens to the lifecycle events of every message the federation's
   * workers process: `completed`, `retrying` (with the next delay and
   * whether the attempt threw or ran out of time), `failed` (once, when a
   * message fails for good: `exhausted`, `timeout` or `permanent`) and
   * `dropped` (with the reason), and `cancelled` (since 0.3.0; a task
   * cancelled with `cancelTask()`, taken off its queue or ended after its
   * signal aborted).  Each event carries the
   * message id, kind, task name (for tasks), attempt, enqueue time and run
   * duration.  A listener that throws is logged and changes nothing.
   * @example
   * ```ts
   * federation.on("failed", (event) => {
   *   console.error(`${event.taskName ?? event.kind} ${event.messageId} failed`, event.error);
   * });
   * ```
   * @param type The event type.
   * @param listener Called with each event of that type, awaited.
   * @returns Removes the listener.
   * @since 0.2.0
   */
  on<T extends MessageEventType>(type: T, listener: MessageEventListener<T>): () => void;

  /**
   * Lists the workers every process of the federation started with
   * `startQueue()` (unless `presence: false`), oldest first: host, pid,
   * runtime, queues, capabilities, state (`busy`, `idle`, `stopping`, or
   * `offline` after missing its heartbeats), the ids of the messages it
   * runs and what it counted since it started, as of its last heartbeat.
   * A worker that stopped is gone at once; one that vanished is listed
   * `offline` until its record expires.
   * @returns The workers; none when the key–value store has no `list()`.
   * @example
   * ```ts ignore
   * for (const worker of await federation.listWorkers()) {
   *   console.log(worker.host, worker.pid, worker.state, worker.currentTaskIds);
   * }
   * ```
   * @since 0.3.0
   */
  listWorkers(): Promise<WorkerInfo[]>;
}

/**
 * Options for `Federation.fetch()`.
 * @typeParam TContextData The context data type.
 * @since 0.2.0
 */
export interface FederationFetchOptions<TContextData> {
  /** The application data of the request's context.  Required. */
  readonly contextData: TContextData;
  /**
   * Answers a request no route of the federation matches (or whose actor,
   * object or collection does not exist): e.g. hand it to the rest of your
   * application.
   * @default a 404 response
   */
  readonly onNotFound?: (request: Request) => Response | Promise<Response>;
  /**
   * Answers a request for an ActivityPub resource that does not ask for
   * JSON-LD (a browser): e.g. serve the HTML page at the same URL.
   * @default a 406 response with `Vary: Accept`
   */
  readonly onNotAcceptable?: (request: Request) => Response | Promise<Response>;
  /**
   * Answers a request refused by an `authorize()` predicate, or an inbox
   * POST whose signature does not verify.
   * @default a 401 response
   */
  readonly onUnauthorized?: (request: Request) => Response | Promise<Response>;
}
