import { getLogger } from "@logtape/logtape";
import type {
  MessageQueue,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueListenOptions,
} from "./message-queue.ts";

const logger = getLogger(["fedwork", "queue"]);

/**
 * Wraps a {@link MessageQueue} so that up to `workers` messages are handled
 * at the same time by one `listen()` call.
 *
 * The wrapper takes a message from the inner queue as soon as fewer than
 * `workers` messages are in its hands, starts the handler, and returns to
 * the inner queue at once; so, for the inner queue, a message is done when
 * its handler has *started*.  A handler that throws is logged under the
 * `["fedwork", "queue"]` category; its error does not reach the inner
 * queue.
 *
 * Ordering keys: the wrapper only sees the messages, not the options they
 * were enqueued with, so it reads the `orderingKey` property of each
 * message (Fedwork's own messages carry the key they were enqueued with
 * there).  Messages whose `orderingKey` is the same string run one at a
 * time, in the order the inner queue handed them over; a message waiting
 * for an earlier one with its key counts towards `workers`.  Messages of
 * other shapes have no ordering constraint in the wrapper.
 *
 * `enqueue()`, `enqueueMany()`, `getDepth()` and `nativeRetrial` are the
 * inner queue's.
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
  }

  /**
   * Whether the inner queue retries failed messages on its own.
   * @since 0.1.0
   */
  get nativeRetrial(): boolean {
    return this.queue.nativeRetrial ?? false;
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
   * @param handler Processes one message.
   * @param options The abort signal.
   * @returns Resolves after the signal aborts, the inner queue's `listen()`
   *          has resolved and every handler has finished.
   * @since 0.1.0
   */
  async listen(
    // deno-lint-ignore no-explicit-any
    handler: (message: any) => Promise<void> | void,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    const running = new Set<Promise<void>>();
    /** The last message taken for each ordering key. */
    const lastByKey = new Map<string, Promise<void>>();
    // The inner queue may call takeOver() concurrently, so several callers
    // can be waiting for a slot at once.
    const slotWaiters: (() => void)[] = [];

    const runOne = async (message: unknown, previous: Promise<void> | undefined) => {
      if (previous != null) await previous;
      try {
        await handler(message);
      } catch (error) {
        logger.error(
          "A message handler failed; the listener continues: {error}",
          { error, orderingKey: orderingKeyOf(message) },
        );
      }
    };

    const takeOver = async (message: unknown): Promise<void> => {
      while (running.size >= this.workers) {
        await new Promise<void>((resolve) => slotWaiters.push(resolve));
      }
      const key = orderingKeyOf(message);
      const task = runOne(message, key == null ? undefined : lastByKey.get(key));
      running.add(task);
      if (key != null) lastByKey.set(key, task);
      task.finally(() => {
        running.delete(task);
        if (key != null && lastByKey.get(key) === task) lastByKey.delete(key);
        slotWaiters.shift()?.();
      });
    };

    await this.queue.listen(takeOver, options);
    await Promise.all(running);
  }

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
