import { keepsMessageObjects, keepsMessages } from "./message-ownership.ts";
import type {
  MessageQueue,
  MessageQueueDeduplicatedEnqueueOptions,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueHandler,
  MessageQueueListenOptions,
  MessageRedelivery,
} from "./message-queue.ts";

/**
 * Wraps a {@link MessageQueue} so that up to `workers` messages are handled
 * at the same time.
 *
 * The wrapper runs `workers` competing `listen()` calls on the inner queue,
 * and each of them awaits its handler.  So, for the inner queue, a message
 * is done only when its handler has *settled*: a durable queue keeps
 * at-least-once delivery, and a handler's error reaches the inner queue
 * (which logs it, or retries the message when it has `nativeRetrial`).  With
 * a durable backend each `listen()` call holds its own consumer, so prefer
 * the backend's own concurrency option when it has one.
 *
 * Ordering keys: the inner queues Fedwork ships already keep messages that
 * share an ordering key apart across listeners.  The wrapper also reads the
 * `orderingKey` property of each message (Fedwork's own messages carry the
 * key they were enqueued with there) and runs messages whose key is the
 * same string one at a time, in the order they were handed over, so a
 * third-party queue that does not serialise keys across listeners is safe
 * too.  A message waiting for an earlier one with its key occupies one of
 * the `workers`.
 *
 * `enqueue()`, `enqueueMany()`, `enqueueDeduplicated()`, `getDepth()`,
 * `nativeRetrial`, `nativeDeduplication` and `nativePriority` are the inner
 * queue's.
 *
 * @example
 * ```ts
 * import { InProcessMessageQueue, ParallelMessageQueue } from "@fedwork/core";
 *
 * const queue = new ParallelMessageQueue(new InProcessMessageQueue(), 4);
 * ```
 * @since 0.1.0
 */
export class ParallelMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * The wrapped queue.
   * @since 0.1.0
   */
  readonly queue: MessageQueue;

  /**
   * How many messages are handled at the same time, at most.
   * @since 0.1.0
   */
  readonly workers: number;

  /**
   * The inner queue's `getDepth()`, or `undefined` when the inner queue
   * cannot report its depth.
   * @since 0.1.0
   */
  readonly getDepth?: () => Promise<MessageQueueDepth>;

  /**
   * The inner queue's `enqueueDeduplicated()`, or `undefined` when the inner
   * queue cannot deduplicate natively.
   * @since 0.2.0
   */
  readonly enqueueDeduplicated?: (
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ) => Promise<boolean>;

  /**
   * Wraps a queue.
   * @param queue The queue to take messages from.
   * @param workers How many messages to handle at the same time: a positive
   *                integer.
   * @throws {TypeError} When `workers` is not a number.
   * @throws {RangeError} When `workers` is not a positive integer.
   * @since 0.1.0
   */
  constructor(queue: MessageQueue, workers: number) {
    if (typeof workers !== "number") {
      throw new TypeError(
        `The workers parameter of ParallelMessageQueue must be a positive integer; ` +
          `got ${typeof workers}.`,
      );
    }
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(
        `The workers parameter of ParallelMessageQueue must be a positive integer; got ${workers}.`,
      );
    }
    this.queue = queue;
    this.workers = workers;
    if (queue.getDepth != null) this.getDepth = () => queue.getDepth!();
    if (typeof queue.derive === "function") {
      const siblings = new Map<string, ParallelMessageQueue>();
      this.derive = (channel) => {
        let sibling = siblings.get(channel);
        if (sibling == null) {
          sibling = new ParallelMessageQueue(queue.derive!(channel), workers);
          siblings.set(channel, sibling);
        }
        return sibling;
      };
    }
    if (queue.nativeDeduplication && queue.enqueueDeduplicated != null) {
      this.enqueueDeduplicated = (message, options) => queue.enqueueDeduplicated!(message, options);
    }
  }

  /**
   * Whether the inner queue retries failed messages on its own.
   * @since 0.1.0
   */
  get nativeRetrial(): boolean {
    return this.queue.nativeRetrial ?? false;
  }

  /**
   * Whether the inner queue deduplicates natively.
   * @since 0.2.0
   */
  get nativeDeduplication(): boolean {
    return this.enqueueDeduplicated != null;
  }

  /**
   * Whether the inner queue orders messages by priority.
   * @since 0.3.0
   */
  get nativePriority(): boolean {
    return this.queue.nativePriority ?? false;
  }

  /** Internal: whether the inner queue keeps handed-over messages uncopied. */
  get [keepsMessageObjects](): boolean {
    return keepsMessages(this.queue);
  }

  /**
   * Whether the inner queue separates the roles of a federation it serves
   * alone (see `MessageQueue.separateRoles`): this queue then does too, with
   * its siblings wrapped like it, so that every process splits the roles
   * the same way whether it wraps the queue or not.
   * @since 0.4.0
   */
  get separateRoles(): boolean {
    return this.queue.separateRoles === true && this.derive != null;
  }

  /**
   * Adds a message to the inner queue.
   * @param message The message.
   * @param options The delay and ordering key.
   * @returns Resolves once the inner queue holds the message.
   * @since 0.1.0
   */
  // deno-lint-ignore no-explicit-any
  enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void> {
    return this.queue.enqueue(message, options);
  }

  /**
   * Adds several messages to the inner queue, with its `enqueueMany()` when
   * it has one, otherwise one after another in order.
   * @param messages The messages.
   * @param options The delay and ordering key, applied to every message.
   * @returns Resolves once the inner queue holds the messages.
   * @since 0.1.0
   */
  async enqueueMany(
    // deno-lint-ignore no-explicit-any
    messages: readonly any[],
    options?: MessageQueueEnqueueOptions,
  ): Promise<void> {
    if (this.queue.enqueueMany != null) {
      await this.queue.enqueueMany(messages, options);
      return;
    }
    for (const message of messages) await this.queue.enqueue(message, options);
  }

  /**
   * Listens to the inner queue and runs up to `workers` handlers at once.
   * @param handler Processes one message; its error reaches the inner queue.
   * @param options The abort signal.
   * @returns Resolves after the signal aborts and every inner `listen()`
   *          call has resolved (so every handler has finished).
   * @since 0.1.0
   */
  async listen(
    handler: MessageQueueHandler,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    /** The turn of the last message taken for each ordering key. */
    const lastByKey = new Map<string, Promise<void>>();
    const handleInTurn = async (
      message: unknown,
      redelivery?: MessageRedelivery,
    ): Promise<void> => {
      const key = orderingKeyOf(message);
      if (key == null) return await handler(message, redelivery);
      const previous = lastByKey.get(key);
      let release!: () => void;
      const turn = new Promise<void>((resolve) => release = resolve);
      lastByKey.set(key, turn);
      try {
        if (previous != null) await previous;
        await handler(message, redelivery);
      } finally {
        release();
        if (lastByKey.get(key) === turn) lastByKey.delete(key);
      }
    };
    const listeners: Promise<void>[] = [];
    for (let i = 0; i < this.workers; i++) {
      listeners.push(this.queue.listen(handleInTurn, options));
    }
    await Promise.all(listeners);
  }

  /**
   * Derives the inner queue's sibling and wraps it with the same number of
   * workers.  Present only when the inner queue has `derive()`.
   * @since 0.2.0
   */
  readonly derive?: (channel: string) => MessageQueue;

  /**
   * Disposes of the inner queue when it is disposable.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    const inner = this.queue as Partial<AsyncDisposable>;
    await inner[Symbol.asyncDispose]?.();
  }
}

function orderingKeyOf(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const key = (message as { orderingKey?: unknown }).orderingKey;
  return typeof key === "string" ? key : undefined;
}
