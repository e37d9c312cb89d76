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
}

/**
 * How many messages a queue holds, as reported by
 * {@link MessageQueue.getDepth}.
 * @since 0.1.0
 */
export interface MessageQueueDepth {
  /** All messages not yet acknowledged: `ready + delayed` plus any in flight. */
  readonly queued: number;
  /** Messages a listener could take now. */
  readonly ready: number;
  /** Messages waiting for their delay to pass. */
  readonly delayed: number;
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
   * Hands each message to `handler` until `options.signal` aborts.  A
   * message leaves the queue only after its handler settles; a handler that
   * throws never stops the listener.  Resolves after the signal aborts and
   * the running handlers have finished.
   * @param handler Processes one message.
   * @param options The abort signal.
   */
  listen(
    // deno-lint-ignore no-explicit-any
    handler: (message: any) => Promise<void> | void,
    options?: MessageQueueListenOptions,
  ): Promise<void>;

  /**
   * Reports how many messages the queue holds.  Optional.
   */
  getDepth?(): Promise<MessageQueueDepth>;
}
