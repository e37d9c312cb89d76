// Starting a process's workers: check the options, pick the queues of its
// roles, listen to each once, and run beside them what the task role
// brings (cancellation requests, recurring tasks) and the worker's
// presence record; flush what the workers counted when they stop.
import { assertKnownOptions } from "../../options/known-options.ts";
import type { MessageDispatcher } from "../../processing/dispatcher.ts";
import { QUEUE_ROLES, type QueueRole } from "../../processing/queue-roles.ts";
import { runWorkers, type WorkerRunObserver } from "../../processing/workers.ts";
import type { InFlightHandle } from "../../processing/in-flight-list.ts";
import type { KvStore } from "../../kv/kv-store.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import { TaskQueueNotConfiguredError } from "../../tasks/errors.ts";
import { type DurationInput, durationToMilliseconds } from "../../time/duration.ts";
import type { MessageRunner, MessageRunners } from "../../processing/message-runners.ts";
import { queueConcurrency } from "./concurrency.ts";
import { PAUSE_RECHECK_MS } from "../pauses/mod.ts";
import { checkMachineId, hostNameNow, localHostName, resolveMachineId } from "./machine-id.ts";
import { resolveWorkerPresenceOptions } from "./options.ts";
import { WorkerPresence } from "./presence.ts";
import type { WorkerShutdown } from "./shutdown.ts";
import type { WorkerEvent, WorkerPresenceOptions } from "./types.ts";

/**
 * Options for {@link Federation.startQueue}.
 * @since 0.1.0
 */
export interface FederationStartQueueOptions {
  /**
   * Stops the workers at once, aborting the running handlers' signals too;
   * `startQueue()` resolves once they have stopped.  To give running
   * handlers a grace first, call `federation.close({ grace })` instead (or
   * let `closeOnSignals()` call it), which stops every `startQueue()`.
   */
  readonly signal?: AbortSignal;
  /**
   * Start only the worker for this role.  All roles by default.  `"task"`
   * also listens to the queues tasks declared with
   * `defineTask(name, { queue })`.  A queue shared with other roles is
   * listened to once and its messages of every type are processed, so no
   * message is left unhandled.
   */
  readonly queue?: QueueRole;
  /**
   * How long to wait, once the handlers' signals abort (when `signal`
   * aborts, or at the end of a `close()`'s grace), for running handlers to
   * finish before `startQueue()` resolves anyway.  Handlers still running
   * then are logged by message id and left running; durable queues hand
   * their messages out again after the lease.
   * @default `{ seconds: 30 }`
   * @since 0.2.0
   */
  readonly shutdownTimeout?: DurationInput;
  /**
   * What this worker can do, e.g. `["gpu", "ffmpeg"]`: besides tasks that
   * need nothing, it runs the tasks whose `capabilities` (see
   * `defineTask()`) are all listed here, and leaves the others queued for a
   * capable worker.  None by default: such a worker runs only tasks without
   * capabilities.
   * @since 0.2.0
   */
  readonly capabilities?: readonly string[];
  /**
   * How this worker registers in the key–value store, for
   * `listWorkers()`: its heartbeat interval (15 seconds by default; one
   * store write per interval, never per message), after how many missed
   * heartbeats it is shown offline (3), and how long an offline worker
   * stays listed (1 hour).  `false` keeps it unlisted.  Needs a store
   * with `list()` to be seen.
   * @since 0.3.0
   */
  readonly presence?: WorkerPresenceOptions | false;
  /**
   * Called with this worker's lifecycle events: `ready` (registered and
   * listening), `stopping` (its signal aborted) and `error` (a queue's
   * listener stopped with an error, or its heartbeat could not be
   * written).  A listener that throws is logged.
   * @example
   * ```ts ignore
   * await federation.startQueue(undefined, {
   *   signal,
   *   onWorkerEvent: (event) => console.log(event.type, event.worker.id, event.error),
   * });
   * ```
   * @since 0.3.0
   */
  readonly onWorkerEvent?: (event: WorkerEvent) => void;
  /**
   * The id of the machine this worker runs on, overriding the federation's
   * `machineId`: shown by `listWorkers()` (and grouped by
   * `groupWorkersByMachine()`), and carried by the task updates and
   * webhook payloads of the tasks it runs.  A non-empty string of at most
   * 256 characters.
   * @default The federation's `machineId`, else the host name.
   * @since 0.4.0
   */
  readonly machineId?: string;
}

/**
 * What {@link startWorkers} needs from the federation.  Internal.
 * @typeParam TContextData The context data the workers run with.
 * @since 0.4.0
 */
export interface WorkerStartPort<TContextData> {
  /** Decides what becomes of every message. */
  readonly dispatcher: MessageDispatcher<TContextData>;
  /** Where the worker's presence record is kept. */
  readonly kv: KvStore;
  /** Whether tasks may fall back to the outbox queue, for the error message. */
  readonly taskQueueResolution: "fallback" | "strict";
  /** The queues already listened to in this process (shared, mutated). */
  readonly listening: Set<MessageQueue>;
  /**
   * The queues to listen to for the given roles, each with its roles.
   * @param roles The roles.
   * @param capabilities The worker's capabilities.
   */
  queuesForRoles(
    roles: readonly QueueRole[],
    capabilities: ReadonlySet<string>,
  ): Map<MessageQueue, QueueRole[]>;
  /**
   * The batch size to listen to each task queue with: the largest
   * `handleMany.size` of the tasks routed to it.  Optional; none without.
   * @param capabilities The worker's capabilities.
   * @since 0.4.0
   */
  batchSizesForQueues?(capabilities: ReadonlySet<string>): Map<MessageQueue, number>;
  /**
   * Listens for cancellation requests of running tasks until the signal
   * aborts.
   * @param signal Stops listening.
   */
  listenForCancellations(signal: AbortSignal): Promise<void>;
  /**
   * Runs the recurring tasks until the signal aborts.
   * @param signal Stops them.
   */
  runSchedules(signal: AbortSignal | undefined): Promise<void>;
  /** Writes out what the stopping workers counted and left running. */
  flush(): Promise<unknown>;
  /**
   * The federation's `close()`: stops the workers besides `signal`, with a
   * grace for their handlers.  Optional.
   * @since 0.4.0
   */
  readonly shutdown?: WorkerShutdown;
  /**
   * The federation's `machineId` option, if given.
   * @since 0.4.0
   */
  readonly machineId?: string;
  /**
   * Where the workers record which of them runs each message.
   * @since 0.4.0
   */
  readonly runners?: MessageRunners;
  /**
   * The paused tasks and roles: watched while the workers run, and asked
   * (from memory) about every message.  Optional.
   * @since 0.4.0
   */
  readonly pauses?: WorkerPauses;
}

/**
 * What the workers need of the pause set.  Internal.
 * @since 0.4.0
 */
export interface WorkerPauses {
  /**
   * Keeps the cached pause set current until the signal aborts; resolves
   * once it has been read and subscribed to.
   * @param signal Stops the watching.
   */
  watch(signal: AbortSignal): Promise<void>;
  /**
   * Whether a message is paused, from the cache.
   * @param message The message.
   */
  held(message: unknown): boolean;
}

/** The host name, once read (it loads `node:os`). */
let knownHostName: string | undefined;
/** The host name being read through `import("node:os")`, where nothing faster tells. */
let hostName: Promise<string> | undefined;

const DEFAULT_SHUTDOWN_TIMEOUT_MS = 30_000;

/**
 * Starts the workers of a process and resolves once they have stopped:
 * `Federation.startQueue()`.  Internal.
 * @param port What the workers need from the federation.
 * @param contextData The context data the workers run with.
 * @param options The roles, capabilities, signal and presence.
 * @throws {UnknownOptionError} When an option's name is unknown.
 * @throws {TypeError} When an option is malformed.
 * @throws {TaskQueueNotConfiguredError} With the task role only and no
 *         queue to listen to.
 * @since 0.4.0
 */
export async function startWorkers<TContextData>(
  port: WorkerStartPort<TContextData>,
  contextData: TContextData,
  options: FederationStartQueueOptions = {},
): Promise<void> {
  assertKnownOptions(
    options,
    [
      "signal",
      "queue",
      "shutdownTimeout",
      "capabilities",
      "presence",
      "onWorkerEvent",
      "machineId",
    ],
    { where: "startQueue()" },
  );
  const givenMachineId = checkMachineId(options.machineId, "startQueue()") ?? port.machineId;
  const presenceOptions = resolveWorkerPresenceOptions(options.presence);
  if (options.onWorkerEvent != null && typeof options.onWorkerEvent !== "function") {
    throw new TypeError("The onWorkerEvent option of startQueue() must be a function.");
  }
  if (options.queue != null && !QUEUE_ROLES.includes(options.queue)) {
    throw new TypeError(
      `The queue option of startQueue() must be one of ${QUEUE_ROLES.join(", ")}; got ${
        JSON.stringify(options.queue)
      }.`,
    );
  }
  const roles = options.queue == null ? QUEUE_ROLES : [options.queue];
  const capabilities = checkWorkerCapabilities(options.capabilities);
  const shutdownTimeoutMs = options.shutdownTimeout == null
    ? DEFAULT_SHUTDOWN_TIMEOUT_MS
    : durationToMilliseconds(options.shutdownTimeout, "shutdownTimeout");
  const groups = port.queuesForRoles(roles, capabilities);
  if (options.queue === "task" && groups.size === 0) {
    throw new TaskQueueNotConfiguredError(
      "(any)",
      port.taskQueueResolution === "strict",
      'startQueue(data, { queue: "task" }) has no queue to listen to: set the queue.task ' +
        "option of createFederation() (or queue.outbox, which tasks fall back to), or give " +
        "tasks their own queue with defineTask(name, { queue }).",
    );
  }
  // Known before the first message runs: every run reports its machine.
  // At once where the runtime can tell (the workers start listening when
  // startQueue() is called); else through node:os, loaded once.
  let host = knownHostName ?? hostNameNow();
  if (host === undefined) {
    hostName ??= localHostName();
    host = await hostName;
  }
  knownHostName = host;
  const runner: MessageRunner = {
    workerId: crypto.randomUUID(),
    machineId: resolveMachineId(givenMachineId, host),
  };
  // Aborting the caller's signal stops the workers and aborts the handlers
  // at once; the federation's close() gives the handlers a grace first.
  const outer = anySignal(options.signal, port.shutdown?.stop);
  const handlerSignal = anySignal(options.signal, port.shutdown?.abortHandlers);
  const queues = new Map<MessageQueue, string>();
  for (const [queue, queueRoles] of groups) {
    // One listener per queue object, however many roles it serves and
    // however often startQueue() is called.
    if (port.listening.has(queue)) continue;
    port.listening.add(queue);
    queues.set(queue, queueRoles.join(", "));
  }
  // Running tasks hear of their cancellation while the workers run, and
  // through the grace of a close().
  const cancelHold = new AbortController();
  if (handlerSignal != null) {
    if (handlerSignal.aborted) cancelHold.abort();
    else handlerSignal.addEventListener("abort", () => cancelHold.abort(), { once: true });
  }
  // Not awaited: the workers start listening at once, and each run waits
  // for the subscription before it starts (see TaskCancellations.begin()).
  if (roles.includes("task")) void port.listenForCancellations(cancelHold.signal);
  const presence = presenceOptions == null || typeof port.kv.list !== "function"
    ? undefined
    : new WorkerPresence(
      port.kv,
      {
        queues: [...queues].map(([queue, label]) => ({
          roles: label,
          type: queue.constructor?.name ?? "MessageQueue",
          concurrency: queueConcurrency(queue),
        })),
        capabilities: [...capabilities],
        id: runner.workerId,
        host,
        machineId: runner.machineId,
      },
      presenceOptions,
      options.onWorkerEvent ?? (() => {}),
    );
  const onStopping = () => void presence?.stopping();
  // Not awaited either: the first heartbeat write (never rejecting) runs
  // beside the workers, which start listening at once.
  const presenceStarted = presence?.start();
  // Read before the first message runs (a message taken sooner waits for
  // it), so that a pause made before this process started, or before a
  // restart, holds at once.
  const pauseWatch = new AbortController();
  const pauses = port.pauses;
  let pauseLoading: Promise<void> | undefined = pauses?.watch(pauseWatch.signal)
    // watch() logs its own failures and never rejects; a message must
    // never wait on a rejected promise all the same.
    .catch(() => {})
    .then(() => {
      pauseLoading = undefined;
    });
  try {
    if (presence != null) {
      if (outer?.aborted) void presenceStarted?.then(onStopping);
      else outer?.addEventListener("abort", onStopping, { once: true });
    }
    await Promise.all([
      runWorkers({
        dispatcher: port.dispatcher,
        queues,
        ...(roles.includes("task") && port.batchSizesForQueues != null
          ? { batchSizes: port.batchSizesForQueues(capabilities) }
          : {}),
        contextData,
        signal: outer,
        handlerSignal,
        shutdownTimeoutMs,
        observer: runnerObserver(runner, port.runners, presence?.observer),
        ...(pauses == null ? {} : {
          hold: {
            held: (message: unknown) => pauses.held(message),
            delayMs: PAUSE_RECHECK_MS,
            pending: () => pauseLoading,
          },
        }),
      }),
      // Recurring tasks are enqueued by the workers of the task role.
      roles.includes("task") ? port.runSchedules(outer) : undefined,
    ]);
  } finally {
    pauseWatch.abort();
    cancelHold.abort();
    outer?.removeEventListener("abort", onStopping);
    // No read of the pause set may outlive the workers (the app disposes
    // of the store after startQueue() resolves).
    await pauseLoading;
    await presenceStarted;
    await presence?.stop();
    for (const queue of queues.keys()) port.listening.delete(queue);
    await port.flush();
  }
}

/**
 * What the workers tell of each run: which worker runs it (for the
 * status records and webhook payloads), and what presence counts.
 */
function runnerObserver(
  runner: MessageRunner,
  runners: MessageRunners | undefined,
  presence: WorkerRunObserver<InFlightHandle<string>> | undefined,
): WorkerRunObserver<{ id: string; presence: InFlightHandle<string> | undefined }> | undefined {
  if (runners == null && presence == null) return undefined;
  return {
    started(messageId) {
      runners?.begin(messageId, runner);
      return { id: messageId, presence: presence?.started(messageId) };
    },
    finished(handle, outcome) {
      runners?.end(handle.id, runner);
      if (presence != null) presence.finished(handle.presence!, outcome);
    },
    failed(error, roles) {
      presence?.failed(error, roles);
    },
  };
}

function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const given = signals.filter((signal) => signal != null);
  return given.length < 2 ? given[0] : AbortSignal.any(given);
}

function checkWorkerCapabilities(capabilities: unknown): ReadonlySet<string> {
  if (capabilities == null) return new Set();
  if (
    !Array.isArray(capabilities) ||
    !capabilities.every((capability) => typeof capability === "string" && capability !== "")
  ) {
    throw new TypeError(
      "The capabilities option of startQueue() must be an array of non-empty strings, " +
        'e.g. ["gpu"].',
    );
  }
  return new Set(capabilities);
}
