import type { DurationInput } from "../time/duration.ts";

/**
 * Options for {@link MessageQueue.enqueue} and {@link MessageQueue.enqueueMany}.
 * @since 0.1.0
 */
export interface MessageQueueEnqueueOptions {
  /**
   * How long to wait before the message becomes available to listeners.
   * No delay by default.  Must not be negative.
   */
  readonly delay?: DurationInput;

  /**
   * Messages that share an ordering key are processed one at a time, in the
   * order they were enqueued.  Messages without a key (the default) have no
   * ordering constraint.
   */
  readonly orderingKey?: string;

  /**
   * An integer from -5 to 5; higher runs first, 0 (the default) is normal.
   * A ready message is handed out before every ready message of lower
   * priority, and messages of equal priority keep their order.  Strict:
   * a steady stream of higher-priority messages can keep lower ones
   * waiting.  Messages that share an ordering key keep their order whatever
   * their priorities.  Only for a queue whose
   * {@link MessageQueue.nativePriority} is `true`; Fedwork never passes a
   * priority other than 0 to any other queue.
   * @since 0.3.0
   */
  readonly priority?: number;
}

/**
 * Options for {@link MessageQueue.enqueueDeduplicated}: the usual enqueue
 * options plus the deduplication key and how long it may be held.
 * @since 0.2.0
 */
export interface MessageQueueDeduplicatedEnqueueOptions extends MessageQueueEnqueueOptions {
  /**
   * The key: while a message enqueued with it is still in the queue (not
   * yet acknowledged, including while it waits for a retry in place), and
   * at most {@link MessageQueueDeduplicatedEnqueueOptions.deduplicationTtl}
   * after that message was enqueued, another enqueue with the key adds
   * nothing.
   */
  readonly deduplicationKey: string;
  /**
   * The longest a key is held, counted from the enqueue that took it, so
   * that a message that is never acknowledged cannot hold its key forever.
   */
  readonly deduplicationTtl: DurationInput;
}

/**
 * Options for {@link MessageQueue.listen}.
 * @since 0.1.0
 */
export interface MessageQueueListenOptions {
  /**
   * Aborting this signal stops listening; `listen()` then resolves once the
   * handlers already running have finished.
   */
  readonly signal?: AbortSignal;

  /**
   * A hint that the handler collects up to this many messages per run (a
   * `handleMany` task's `size`; a Fedwork worker passes the largest
   * `handleMany.size` of the tasks routed to the queue): the queue sizes
   * its claims or its prefetch to it, so that a run fills from one round
   * trip instead of one message at a time.  Fedwork's lease-based queues
   * claim up to `max(prefetch, batchSize)` messages beyond their free
   * handler slots; the AMQP queue sets its channel prefetch to
   * `max(prefetch, 2 × batchSize)`.  A queue may ignore it (the in-process
   * queue does).  A positive integer; none by default.
   * @since 0.4.0
   */
  readonly batchSize?: number;
}

/**
 * Options for {@link MessageRedelivery.redeliver}.
 * @since 0.2.0
 */
export interface MessageRedeliveryOptions {
  /**
   * How long the message waits before it is handed out again.  Must not be
   * negative.
   */
  readonly delay: DurationInput;
}

/**
 * What a queue that can *redeliver in place* hands to its listener's handler
 * as the second argument, next to each message.  Calling
 * {@link MessageRedelivery.redeliver} replaces the stored message with a new
 * version (the next attempt of a failed one) and makes it available again
 * after a delay, without acknowledging it: the message keeps its place in
 * its ordering key, so messages enqueued after it with the same key wait
 * until it has finally been handled.  Re-enqueueing a retry, the fallback
 * for queues without this capability, puts it behind them instead.
 *
 * A queue whose handlers get no second argument (a queue written for Fedify,
 * say) lacks the capability; Fedwork then re-enqueues retries.
 * @since 0.2.0
 */
export interface MessageRedelivery {
  /**
   * Stores `message` in place of the message being handled and hands it out
   * again after `options.delay`, keeping its ordering key held meanwhile.
   * When the returned promise resolves, the queue holds the new version and
   * will not acknowledge the message when the handler returns; if it
   * rejects, nothing changed and the handler should throw so that the
   * message is redelivered as it was.  A handler that throws after a
   * successful call leaves the new version in place.  Call it at most once
   * per delivery.
   * @param message The new version of the message; JSON-compatible.
   * @param options The delay.
   * @returns Resolves once the new version is stored.
   * @throws {RangeError} When `delay` is negative.
   */
  // deno-lint-ignore no-explicit-any
  redeliver(message: any, options: MessageRedeliveryOptions): Promise<void>;

  /**
   * How many times the queue has handed this message out, this hand-out
   * included: 1 the first time.  The count is taken when the message is
   * handed out, before the handler runs, so a process killed while handling
   * it has still counted the hand-out.  A successful
   * {@link MessageRedelivery.redeliver} (a retry in place: an outcome was
   * recorded) resets it, so the next hand-out of the new version is 1
   * again.  A handler that throws (or a worker that dies) leaves it
   * counting.  Absent when the queue cannot tell.
   *
   * Fedwork quarantines a message handed out more than `maxDeliveries`
   * times without an outcome (a *poison* message, one that kills the
   * worker handling it): it goes to the failed-task store instead of
   * being run again.
   * @since 0.4.0
   */
  readonly deliveryCount?: number;

  /**
   * Tells the queue that the handler is waiting for more messages to
   * handle together with this one (a `handleMany` task's run filling up):
   * until the returned function is called, the handler does not count
   * towards the listener's `concurrency`, so the listener starts (and
   * claims) further messages in its place.  The message stays leased and
   * its lease renewed.  A listener may refuse (past its own bound): the
   * function it then returns does nothing.  Optional: without it, a
   * waiting handler holds its slot.
   * @returns Takes the slot back; calling it again does nothing.
   * @since 0.4.0
   */
  readonly yieldSlot?: () => () => void;
}

/**
 * The handler {@link MessageQueue.listen} calls for each message.  Throwing
 * (or rejecting) means "not handled": the queue keeps the message and hands
 * it out again later (durable queues after their lease or visibility
 * timeout), so a message is never lost because its handler failed.
 * Returning means "done": the message is acknowledged, unless the handler
 * asked for a {@link MessageRedelivery} first.
 * @param message The message, as enqueued.
 * @param redelivery Present when the queue can redeliver in place.
 * @since 0.2.0
 */
export type MessageQueueHandler = (
  // deno-lint-ignore no-explicit-any
  message: any,
  redelivery?: MessageRedelivery,
) => Promise<void> | void;

/**
 * How many messages a queue holds, as reported by
 * {@link MessageQueue.getDepth}.
 * @since 0.1.0
 */
export interface MessageQueueDepth {
  /** All messages not yet acknowledged: `ready + delayed` plus any in flight. */
  readonly queued: number;
  /**
   * Messages a listener could take now.  Optional, as in Fedify: a queue
   * that cannot cheaply tell ready from delayed messages omits it (every
   * Fedwork queue reports it).
   * @since 0.2.0 optional
   */
  readonly ready?: number;
  /**
   * Messages waiting for their delay to pass.  Optional, like `ready`.
   * @since 0.2.0 optional
   */
  readonly delayed?: number;
}

/**
 * A message queue: what Fedwork's workers consume and what activities,
 * fan-outs and tasks are enqueued into.  The shape is structurally
 * compatible with Fedify's `MessageQueue`, so an adapter written for one
 * works with the other.
 *
 * Messages are plain JSON-compatible values (Fedwork's own messages are
 * objects of strings, numbers and string records).
 * @since 0.1.0
 */
export interface MessageQueue {
  /**
   * Whether the queue retries a message on its own when the handler throws.
   * When `true`, Fedwork rethrows handler errors to the queue instead of
   * re-enqueueing with its retry policy.  `false` when absent.
   */
  readonly nativeRetrial?: boolean;

  /**
   * Adds a message.  Resolves once the queue holds the message.
   * @param message The message; JSON-compatible.
   * @param options Delay and ordering key.
   */
  // deno-lint-ignore no-explicit-any
  enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void>;

  /**
   * Adds several messages at once (in one round trip or transaction where
   * the engine allows), in order.  Optional; callers fall back to
   * parallel {@link MessageQueue.enqueue} calls.
   * @param messages The messages; JSON-compatible.
   * @param options Delay and ordering key, applied to every message.
   */
  // deno-lint-ignore no-explicit-any
  enqueueMany?(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void>;

  /**
   * Whether the queue deduplicates natively and atomically, i.e. has
   * {@link MessageQueue.enqueueDeduplicated}.  Fedwork then leaves task
   * deduplication keys to the queue instead of reserving them in the
   * key–value store.  `false` when absent.
   * @since 0.2.0
   */
  readonly nativeDeduplication?: boolean;

  /**
   * Whether the queue honours {@link MessageQueueEnqueueOptions.priority}:
   * hands out ready messages highest priority first.  Fedwork refuses a
   * priority other than 0 for a queue without it, instead of letting it go
   * unnoticed.  `false` when absent.
   * @since 0.3.0
   */
  readonly nativePriority?: boolean;

  /**
   * Adds a message unless the queue holds a message enqueued with the same
   * `deduplicationKey` less than `deduplicationTtl` ago; the check and the
   * insert are one atomic step, across every process sharing the queue.
   * The key is freed as soon as that message is acknowledged.  Optional;
   * present exactly when {@link MessageQueue.nativeDeduplication} is `true`.
   * @param message The message; JSON-compatible.
   * @param options Delay, ordering key, deduplication key and its TTL.
   * @returns `true` when the message was added, `false` when the key was
   *          held and nothing was added.
   * @since 0.2.0
   */
  enqueueDeduplicated?(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ): Promise<boolean>;

  /**
   * Hands each message to `handler` until `options.signal` aborts.  A
   * message leaves the queue only after its handler returns; a handler that
   * throws never stops the listener, and its message is handed out again
   * later (Fedwork's own queues do so after their lease; queues written for
   * Fedify may drop it).  Queues that can redeliver in place pass a
   * {@link MessageRedelivery} as the handler's second argument.  Resolves
   * after the signal aborts and the running handlers have finished.
   * @param handler Processes one message.
   * @param options The abort signal.
   */
  listen(handler: MessageQueueHandler, options?: MessageQueueListenOptions): Promise<void>;

  /**
   * Reports how many messages the queue holds.  Optional.
   */
  getDepth?(): Promise<MessageQueueDepth>;

  /**
   * Returns a sibling queue: the same engine and settings, holding its
   * messages apart under a name derived from this queue's and `channel`
   * (another table, key prefix or queue name), so that listeners of one
   * never see the other's messages.  Fedwork uses it for capability
   * routing: a task that needs capabilities is enqueued into the sibling
   * for its capability set, which only capable workers listen to.
   * Optional; tasks with `capabilities` need it.  Deriving the same channel
   * twice may return a new object each time (Fedwork caches them), and the
   * sibling is disposed of along with this queue.
   * @param channel Made of lowercase letters, digits and underscores, at
   *                most 40 characters.
   * @returns The sibling queue.
   * @since 0.2.0
   */
  derive?(channel: string): MessageQueue;

  /**
   * Whether a federation given this queue as its one `queue` option, for
   * every role, gives the outbox, fan-out and task roles a sibling each
   * (`derive("outbox")`, `derive("fanout")`, `derive("task")`), listened
   * to apart with handler slots of their own: a long task then cannot hold
   * up received activities or deliveries, nor a slow delivery the tasks.
   * The inbox keeps this queue, so messages queued in it before are still
   * handled.  Only with {@link MessageQueue.derive}; `false` when absent
   * (every role shares this queue and its listener).
   * @since 0.4.0
   */
  readonly separateRoles?: boolean;
}
