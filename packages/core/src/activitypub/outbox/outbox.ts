// The outbox's policy: how the deliveries of a sent activity reach their
// inboxes.  With an outbox queue they are enqueued; without one they are
// made now, with the caller as the one who retries.  A fan-out either
// enqueues every delivery or, with `fanoutDeliveries`, makes the first
// attempts itself.  One delivery goes through host health, when it is on,
// then is signed and POSTed.  Generic over the context type: the
// federation fills in the ports.
import type { DocumentLoader, Recipient } from "@fedify/vocab";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../../queue/message-queue.ts";
import type { Outcome } from "../../processing/outcome.ts";
import { neverAborted } from "../../processing/never-aborted.ts";
import type { ActorKeyPair } from "../actors/key-pairs.ts";
import type { PageItems } from "../collections/build.ts";
import { RouteNotRegisteredError } from "../http/errors.ts";
import {
  deliverOutboxMessage,
  type DeliveryOptions,
  expandFanoutMessage,
  type PermanentFailureCallback,
} from "./delivery.ts";
import { fanOutDirectly, type ResolvedFanoutDeliveries } from "./fanout.ts";
import type { DeliveryHostPolicy } from "./host-policy.ts";
import type { FanoutMessage, OutboxMessage } from "./messages.ts";
import type { ActivityTransport, SendingContext } from "./send-activity.ts";

/**
 * What a run of a queued outbox or fan-out message carries.
 * @typeParam TContextData The context data the workers were started with.
 * @since 0.4.0
 */
export interface OutboxRun<TContextData> {
  /** The context data. */
  readonly contextData: TContextData;
  /** Aborts the run: the worker's shutdown or the message's time limit. */
  readonly signal: AbortSignal;
}

/**
 * The followers collection as {@link Outbox.listFollowers} reads it: the
 * registered dispatcher and first cursor.
 * @typeParam TContext The context they get.
 * @since 0.4.0
 */
export interface FollowersSource<TContext> {
  /** Returns the whole collection (cursor `null`) or one page. */
  readonly dispatcher: (
    ctx: TContext,
    identifier: string,
    cursor: string | null,
  ) => PageItems<Recipient> | null | Promise<PageItems<Recipient> | null>;
  /** The first page's cursor, for a paged collection. */
  readonly firstCursor?: (
    ctx: TContext,
    identifier: string,
  ) => string | null | Promise<string | null>;
}

/**
 * The registrations an {@link Outbox} reads, when it needs them: the part
 * of a federation's registry it uses.
 * @typeParam TContext The context the callbacks get.
 * @since 0.4.0
 */
export interface OutboxRegistry<TContext> {
  /** The actor route; deliveries need its key pairs dispatcher. */
  readonly actor?: { readonly keyPairsDispatcher?: unknown } | undefined;
  /** The followers collection, for the recipients `"followers"`. */
  readonly followers?: FollowersSource<TContext> | undefined;
  /** Called once when a delivery fails for good. */
  readonly outboxPermanentFailureHandler?: PermanentFailureCallback<TContext> | undefined;
}

/**
 * Host health as the outbox uses it: a delivery to a parked or dead host
 * is held back, and the outcome of each attempt is recorded.
 * @since 0.4.0
 */
export interface DeliveryHostHealth {
  /**
   * Makes a delivery's attempt unless its host is held back.
   * @param message The delivery.
   * @param attempt Makes the attempt.
   */
  deliver(message: OutboxMessage, attempt: () => Promise<void>): Promise<void>;
}

/**
 * What an {@link Outbox} needs from the federation that wires it.
 * @typeParam TContextData The context data the workers are started with.
 * @typeParam TContext The context activities are sent from and callbacks get.
 * @since 0.4.0
 */
export interface OutboxPort<TContextData, TContext> {
  /** The outbox and fanout queues, when there are. */
  readonly queues: {
    readonly outbox?: MessageQueue | undefined;
    readonly fanout?: MessageQueue | undefined;
  };
  /** The `fanoutDeliveries` option, resolved; `undefined` when off. */
  readonly fanoutDeliveries?: ResolvedFanoutDeliveries | undefined;
  /** How one delivery is made: the store, user agent, limits and knocks. */
  readonly delivery: Omit<
    DeliveryOptions<never>,
    "createContext" | "getKeyPairs" | "onPermanentFailure" | "signal"
  >;
  /** The registrations, read when needed. */
  readonly registry: OutboxRegistry<TContext>;
  /** Host health, when the `hostHealth` option is on; read per delivery. */
  hostHealth(): DeliveryHostHealth | undefined;
  /**
   * The `hostPolicy` option as deliveries apply it, when it is set.
   * @since 0.4.0
   */
  readonly hostPolicy?: DeliveryHostPolicy | undefined;
  /**
   * Makes a context for a message's base URL.
   * @param baseUrl The base URL.
   * @param contextData The context data.
   */
  createContext(baseUrl: URL, contextData: TContextData): TContext;
  /**
   * Returns the sender's key pairs (cached per process).
   * @param ctx The delivery's context.
   * @param identifier The sender's identifier.
   */
  getKeyPairs(ctx: TContext, identifier: string): Promise<ActorKeyPair[]>;
  /**
   * Hands messages to the producer.
   * @param queue The queue.
   * @param messages The messages.
   * @param contextData The context data, for starting the workers.
   * @param options The enqueue options.
   */
  enqueue(
    queue: MessageQueue,
    messages: readonly (OutboxMessage | FanoutMessage)[],
    contextData: TContextData,
    options?: MessageQueueEnqueueOptions,
  ): Promise<void>;
  /**
   * Hands a delivery to the dispatcher now, as a worker would.
   * @param message The delivery.
   * @param run The context data and signal.
   * @param options `callerRetries` when the caller, not a queue, retries.
   * @returns The outcome.
   */
  dispatch(
    message: OutboxMessage,
    run: OutboxRun<TContextData>,
    options?: { readonly callerRetries?: boolean },
  ): Promise<Outcome>;
}

/**
 * The outbox: the {@link ActivityTransport} that `sendActivity()` and
 * `forwardActivity()` send through, and the runs of queued fan-out and
 * outbox messages.  Internal.
 * @typeParam TContextData The context data the workers are started with.
 * @typeParam TContext The context activities are sent from.
 * @since 0.4.0
 */
export class Outbox<
  TContextData,
  TContext extends SendingContext & {
    readonly data: TContextData;
    readonly documentLoader: DocumentLoader;
  },
> implements ActivityTransport<TContext> {
  readonly #port: OutboxPort<TContextData, TContext>;

  /**
   * @param port What the outbox needs from the federation.
   */
  constructor(port: OutboxPort<TContextData, TContext>) {
    this.#port = port;
  }

  assertCanSign(): void {
    // Fail in the caller rather than in every delivery: nothing can be
    // delivered unsigned.
    if (this.#port.registry.actor?.keyPairsDispatcher == null) {
      throw new RouteNotRegisteredError(
        "key pairs dispatcher (deliveries are signed with the sender's keys)",
        "setActorDispatcher(…).setKeyPairsDispatcher",
      );
    }
  }

  async listFollowers(ctx: TContext, identifier: string): Promise<Recipient[]> {
    const route = this.#port.registry.followers;
    if (route == null) {
      throw new RouteNotRegisteredError("followers dispatcher", "setFollowersDispatcher");
    }
    const followers: Recipient[] = [];
    // First the whole collection at once (cursor null); a paged collection
    // answers null there, and is then read page by page from its first cursor.
    let cursor: string | null = null;
    let page = await route.dispatcher(ctx, identifier, null);
    if (page == null) {
      cursor = await route.firstCursor?.(ctx, identifier) ?? null;
      if (cursor == null) return followers;
      page = await route.dispatcher(ctx, identifier, cursor);
    }
    // Guard against a dispatcher that hands out the same cursor forever.
    const seen = new Set<string | null>([cursor]);
    while (page != null) {
      followers.push(...page.items);
      const next: string | null = page.nextCursor ?? null;
      if (next == null || seen.has(next)) break;
      seen.add(next);
      page = await route.dispatcher(ctx, identifier, next);
    }
    return followers;
  }

  fanoutQueue(): MessageQueue | undefined {
    return this.#port.queues.fanout;
  }

  enqueueFanout(
    queue: MessageQueue,
    message: FanoutMessage,
    ctx: TContext,
    options: MessageQueueEnqueueOptions,
  ): Promise<void> {
    return this.#port.enqueue(queue, [message], ctx.data, options);
  }

  deliverOrEnqueue(messages: OutboxMessage[], ctx: TContext): Promise<void> {
    return this.deliverOrEnqueueFor(messages, ctx.data);
  }

  /**
   * Enqueues deliveries into the outbox queue or, without one, hands each
   * to the dispatcher now, as a worker would, with the caller as the one
   * who retries.
   * @param messages The deliveries.
   * @param contextData The context data, for starting workers.
   * @param signal Aborts deliveries made now (a fan-out's time limit).
   * @throws {AggregateError} When delivering now and some deliveries fail,
   *         with the error of each.
   */
  async deliverOrEnqueueFor(
    messages: OutboxMessage[],
    contextData: TContextData,
    signal: AbortSignal = neverAborted(),
  ): Promise<void> {
    const queue = this.#port.queues.outbox;
    const orderingKey = messages[0]?.orderingKey;
    const policy = this.#port.hostPolicy;
    if (policy != null) {
      messages = await policy.withoutBlocked(messages);
      if (messages.length === 0) return;
    }
    if (queue != null) {
      await this.#port.enqueue(
        queue,
        messages,
        contextData,
        orderingKey == null ? {} : { orderingKey },
      );
      return;
    }
    const results = await Promise.allSettled(
      messages.map((message) =>
        this.#port.dispatch(message, { contextData, signal }, { callerRetries: true })
      ),
    );
    // A failed attempt is thrown; a delivery that failed for good (a
    // PermanentError) or was dropped is an outcome, but a failure all the same.
    const errors = results.flatMap((result) =>
      result.status === "rejected"
        ? [result.reason]
        : result.value.type === "failed"
        ? [result.value.error]
        : result.value.type === "dropped"
        ? [result.value.error ?? new Error(result.value.reason)]
        : []
    );
    if (errors.length > 0) {
      throw new AggregateError(
        errors,
        `Failed to deliver to ${errors.length} of ${messages.length} inboxes.`,
      );
    }
  }

  /**
   * Runs a fan-out message: with `fanoutDeliveries` on, an outbox queue
   * and no ordering key, makes the first attempts here and enqueues the
   * rest; otherwise enqueues every delivery (see
   * {@link deliverOrEnqueueFor}).
   * @param message The fan-out message.
   * @param run The context data and signal.
   */
  async fanOut(message: FanoutMessage, run: OutboxRun<TContextData>): Promise<void> {
    const policy = this.#port.hostPolicy;
    const expanded = expandFanoutMessage(message);
    const messages = policy == null ? expanded : await policy.withoutBlocked(expanded);
    const direct = this.#port.fanoutDeliveries;
    const queue = this.#port.queues.outbox;
    if (direct == null || queue == null || messages[0]?.orderingKey != null) {
      return await this.deliverOrEnqueueFor(messages, run.contextData, run.signal);
    }
    const { contextData, signal } = run;
    await fanOutDirectly(messages, {
      ...direct,
      signal,
      deliver: (message) => this.#port.dispatch(message, { contextData, signal }),
      enqueue: (rest) => this.#port.enqueue(queue, rest, contextData, {}),
    });
  }

  /**
   * Runs an outbox message: one delivery, through host health when it is
   * on (only queued deliveries: host health needs the outbox queue anyway).
   * @param message The delivery.
   * @param run The context data and signal.
   */
  deliver(message: OutboxMessage, run: OutboxRun<TContextData>): Promise<void> {
    const hostHealth = this.#port.hostHealth();
    const policy = this.#port.hostPolicy;
    if (policy == null) {
      if (hostHealth == null) return this.#deliverNow(message, run);
      return hostHealth.deliver(message, () => this.#deliverNow(message, run));
    }
    // Blocked and waiting hosts first: host health counts only attempts,
    // and a wait a host asked for is none.
    const post = () => policy.honourRetryAfter(message, () => this.#deliverNow(message, run));
    return policy.deliver(
      message,
      run.signal,
      hostHealth == null ? post : () => hostHealth.deliver(message, post),
    );
  }

  #deliverNow(message: OutboxMessage, run: OutboxRun<TContextData>): Promise<void> {
    const port = this.#port;
    return deliverOutboxMessage(message, {
      ...port.delivery,
      signal: run.signal,
      createContext: (baseUrl) => port.createContext(baseUrl, run.contextData),
      getKeyPairs: (ctx, identifier) => port.getKeyPairs(ctx, identifier),
      onPermanentFailure: port.registry.outboxPermanentFailureHandler,
    });
  }
}
