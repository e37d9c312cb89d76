// The inbox's policy: a verified message is enqueued into the inbox queue
// or, without one (or for `routeActivity({ immediate: true })`), handed to
// the dispatcher now with the sender as the one who retries; a queued one
// is run by the listener of its activity's class.  Generic over the
// context the listeners get: the federation fills in the port.
import type { DocumentLoader } from "@fedify/vocab";
import type {
  MessageDispatcher,
  MessageKindHandler,
  MessageRun,
  UnhandledRun,
} from "../../processing/dispatcher.ts";
import { neverAborted } from "../../processing/never-aborted.ts";
import type { Outcome } from "../../processing/outcome.ts";
import type { MessageProducer } from "../../processing/producer.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import type { RetryPolicy } from "../../retry/retry-policy.ts";
import { createFederationMessageHandler } from "../message-kinds.ts";
import type { DocumentLoadBudget } from "../network/document-budget.ts";
import {
  handleInboxMessage,
  type InboxListenerRegistry,
  type VerifiedActivityHook,
} from "./listeners.ts";
import type { InboxMessage } from "./message.ts";

/**
 * What an {@link Inbox} needs from the federation that wires it.
 * @typeParam TContextData The context data the workers are started with.
 * @typeParam TContext The context the listeners get.
 * @since 0.4.0
 */
export interface InboxPort<TContextData, TContext> {
  /** The inbox queue, when there is one. */
  readonly queue?: MessageQueue | undefined;
  /** The listeners and the error handler, read when a message runs. */
  readonly registry: InboxListenerRegistry<TContext>;
  /** Loads remote documents while parsing. */
  readonly documentLoader: DocumentLoader;
  /** The document limits and load budget of one activity. */
  readonly budget: Omit<DocumentLoadBudget, "signal">;
  /**
   * Makes the context a listener gets.
   * @param message The message.
   * @param contextData The context data.
   * @param signal The run's signal.
   */
  createContext(message: InboxMessage, contextData: TContextData, signal: AbortSignal): TContext;
  /** The one path messages take into queues. */
  readonly producer: Pick<MessageProducer<TContextData>, "produce">;
  /** Decides what becomes of a message run now. */
  readonly dispatcher: Pick<MessageDispatcher<TContextData>, "dispatch">;
  /** The inbox retry policy (`inboxRetryPolicy`). */
  readonly retryPolicy: () => RetryPolicy;
  /** An inbox message's time limit in milliseconds (`inboxTimeout`), or `null`. */
  readonly timeoutMs: () => number | null;
  /** Told of each verified activity before its listener (waiting steps). */
  readonly verified?: VerifiedActivityHook;
}

/**
 * The inbox: takes verified messages and runs queued ones.  Internal.
 * @typeParam TContextData The context data the workers are started with.
 * @typeParam TContext The context the listeners get.
 * @since 0.4.0
 */
export class Inbox<TContextData, TContext extends { readonly signal: AbortSignal }> {
  readonly #port: InboxPort<TContextData, TContext>;

  /**
   * @param port What the inbox needs from the federation.
   */
  constructor(port: InboxPort<TContextData, TContext>) {
    this.#port = port;
  }

  /**
   * Takes a verified inbox message: enqueues it into the inbox queue or,
   * without one, hands it to the dispatcher now, as a worker would, with
   * the sender as the one who retries.
   * @param message The message.
   * @param contextData The context data.
   * @param options `immediate` to run it now even with an inbox queue.
   * @returns `undefined` when enqueued, else the outcome of processing it.
   * @throws When it could not be enqueued, or, without a queue, the
   *         attempt failed and the sender should retry.
   */
  async receive(
    message: InboxMessage,
    contextData: TContextData,
    options: { readonly immediate?: boolean } = {},
  ): Promise<Outcome | undefined> {
    const { queue, producer, dispatcher } = this.#port;
    if (queue != null && !options.immediate) {
      await producer.produce(queue, [message], {}, { start: { contextData } });
      return undefined;
    }
    return await dispatcher.dispatch(message, { contextData, signal: neverAborted() }, {
      callerRetries: true,
    });
  }

  /**
   * The dispatcher's handler of inbox messages: checks them and runs them
   * through {@link run}, with the inbox retry policy, time limit and queue.
   * @returns The handler.
   */
  handler(): MessageKindHandler<TContextData, InboxMessage> {
    const port = this.#port;
    return createFederationMessageHandler<TContextData, "inbox">("inbox", {
      run: (message, run) => this.run(message, run),
      retryPolicy: port.retryPolicy,
      timeout: port.timeoutMs,
      queue: () => port.queue,
    });
  }

  /**
   * Runs a queued inbox message: parses its activity and calls the
   * listener of its class (see `handleInboxMessage()`).
   * @param message The message.
   * @param run The context data and the run's signal.
   * @returns Nothing, or an `UnhandledRun` when no listener handles it.
   */
  run(message: InboxMessage, run: MessageRun<TContextData>): Promise<void | UnhandledRun> {
    const { registry, documentLoader, budget, verified } = this.#port;
    const ctx = this.#port.createContext(message, run.contextData, run.signal);
    return handleInboxMessage(message, ctx, registry, documentLoader, budget, verified);
  }
}
