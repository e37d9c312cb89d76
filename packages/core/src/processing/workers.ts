import { getLogger } from "@logtape/logtape";
import type { MessageQueue, MessageRedelivery } from "../queue/message-queue.ts";
import type { MessageDispatcher } from "./dispatcher.ts";
import type { OutcomeType } from "./outcome.ts";
import { neverAborted } from "./never-aborted.ts";
import { type MessageHold, putBackHeldMessage } from "./hold.ts";
import { isBaseMessage } from "./envelope.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * What {@link runWorkers} listens to and how it stops.
 * @typeParam TContextData The application data of the workers' contexts.
 * @since 0.2.0
 */
export interface RunWorkersOptions<TContextData> {
  /** The dispatcher that processes every message. */
  readonly dispatcher: MessageDispatcher<TContextData>;
  /** Each queue to listen to, with a label (its roles) for logs. */
  readonly queues: ReadonlyMap<MessageQueue, string>;
  /**
   * The `batchSize` to listen to some of `queues` with (see
   * `MessageQueueListenOptions.batchSize`): the largest `handleMany.size`
   * of the tasks routed to each.  None for the queues left out.
   * @since 0.4.0
   */
  readonly batchSizes?: ReadonlyMap<MessageQueue, number>;
  /** The context data handlers get. */
  readonly contextData: TContextData;
  /** Aborting it stops taking messages and starts the shutdown. */
  readonly signal?: AbortSignal;
  /**
   * Aborts the running handlers' signals: their grace is over.  `signal`
   * by default, so that handlers hear of the shutdown at once; a signal
   * aborted later lets them finish in the meantime.
   * @since 0.4.0
   */
  readonly handlerSignal?: AbortSignal;
  /**
   * How long to wait, after the handlers' signal aborts, for running
   * handlers to finish before resolving anyway, in milliseconds.
   */
  readonly shutdownTimeoutMs: number;
  /**
   * Sees each message start and end on these workers, and a listener that
   * stops with an error: what worker presence counts.  Its calls must not
   * throw.
   * @since 0.3.0
   */
  readonly observer?: WorkerRunObserver;
  /**
   * Which messages must wait (paused tasks and roles): such a message goes
   * back into its queue, due later, without reaching the dispatcher.
   * @since 0.4.0
   */
  readonly hold?: MessageHold;
}

/**
 * What {@link runWorkers} tells about the messages its workers run.
 * Internal.
 * @since 0.3.0
 */
export interface WorkerRunObserver<THandle = unknown> {
  /**
   * A message was handed to the dispatcher.
   * @param messageId Its id (`""` for a message that is not Fedwork's).
   * @returns What `finished()` is given for this run.
   */
  started(messageId: string): THandle;
  /**
   * The dispatcher is done with it.
   * @param handle What `started()` returned for this run.
   * @param outcome What became of it; `"retrying"` when the dispatcher
   *                threw for the queue to redeliver.
   */
  finished(handle: THandle, outcome: OutcomeType): void;
  /**
   * The listener of a queue stopped with an error.
   * @param error The error.
   * @param roles The queue's roles, for logs.
   */
  failed(error: unknown, roles: string): void;
}

/**
 * Listens to each queue until `signal` aborts, dispatching every message;
 * then stops taking messages and resolves once the running handlers have
 * finished, or after the shutdown timeout that starts when the handlers'
 * signal aborts (logging which messages were still running: durable
 * queues hand them out again after their lease).  Handlers see the abort
 * through their run's `signal`, which is `handlerSignal` (or `signal`).
 * @param options The dispatcher, queues, context data, signal and timeout.
 * @returns Resolves when the workers have stopped.
 * @since 0.2.0
 */
export async function runWorkers<TContextData>(
  options: RunWorkersOptions<TContextData>,
): Promise<void> {
  const { dispatcher, contextData, signal, shutdownTimeoutMs, observer, hold } = options;
  const handlerSignal = options.handlerSignal ?? signal;
  const listeners: Promise<void>[] = [];
  // The same for every message of a worker: made once, not per message.
  const run = { contextData, signal: handlerSignal ?? neverAborted() };
  for (const [queue, label] of options.queues) {
    logger.info("Starting the worker for the {roles} queue.", { roles: label });
    const plainSource = { queue };
    const batchSize = options.batchSizes?.get(queue);
    // Not async: the dispatch's own promise, or one then() on it, is what
    // the queue awaits; on every message's path.
    const handle = (message: unknown, redelivery?: MessageRedelivery): Promise<void> => {
      const source = redelivery == null ? plainSource : { queue, redelivery };
      // The outcome is not the queue's business; dispatch() rejects only
      // when the queue must keep the message.
      if (observer == null) {
        return dispatcher.dispatch(message, run, source) as Promise<unknown> as Promise<void>;
      }
      const started = observer.started(messageIdOf(message));
      return dispatcher.dispatch(message, run, source).then(
        (outcome) => {
          observer.finished(started, outcome.type);
        },
        (error) => {
          observer.finished(started, "retrying");
          throw error;
        },
      );
    };
    const holdOrHandle = (message: unknown, redelivery?: MessageRedelivery): Promise<void> =>
      hold!.held(message) && isBaseMessage(message)
        ? putBackHeldMessage(queue, message, hold!.delayMs)
        : handle(message, redelivery);
    listeners.push(
      queue.listen(
        hold == null ? handle : (message, redelivery): Promise<void> => {
          // Only the messages taken before the pause set was first read
          // wait for it; after that, one call answered from memory.
          const pending = hold.pending();
          if (pending != null) return pending.then(() => holdOrHandle(message, redelivery));
          return holdOrHandle(message, redelivery);
        },
        batchSize == null ? { signal } : { signal, batchSize },
      ).then(
        () => logger.info("Stopped the worker for the {roles} queue.", { roles: label }),
        (error) => {
          logger.error("The worker for the {roles} queue stopped with an error: {error}", {
            roles: label,
            error,
          });
          observer?.failed(error, label);
          throw error;
        },
      ),
    );
  }
  const all = Promise.all(listeners).then(() => undefined);
  if (signal == null) return await all;
  // Until the workers stop taking messages, then until the handlers' grace
  // is over: the listeners may end first in either phase.
  for (const phase of new Set([signal, handlerSignal ?? signal])) {
    if (!phase.aborted) await Promise.race([all, aborted(phase)]);
    if (!phase.aborted) return await all;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), shutdownTimeoutMs);
  });
  try {
    const result = await Promise.race([all, timedOut]);
    if (result === "timeout") {
      logger.warn(
        "Stopped waiting for {count} running messages after the shutdown timeout of " +
          "{shutdownTimeoutMs} ms; durable queues hand them out again: {messages}",
        {
          count: dispatcher.inFlight.length,
          shutdownTimeoutMs,
          messages: dispatcher.inFlight,
        },
      );
      // The listeners may still settle later; their errors are logged above.
      all.catch(() => {});
    }
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves when `signal` aborts (it has not yet). */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

function messageIdOf(message: unknown): string {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id : "";
}
