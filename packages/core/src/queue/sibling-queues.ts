import { checkQueueChannel } from "./in-process-message-queue.ts";

/**
 * The siblings a queue hands out from `MessageQueue.derive()`: one per
 * channel, created on first use, the same instance for the same channel
 * afterwards, and disposed of with the queue that derived them.  A backend
 * keeps one of these and forwards `derive()` and its disposal to it:
 *
 * ```ts
 * import type { MessageQueue } from "@fedwork/core";
 * import { SiblingQueues } from "@fedwork/core/queue-kit";
 *
 * declare class MyQueue implements MessageQueue, AsyncDisposable {
 *   constructor(options: { name: string });
 *   enqueue(message: unknown): Promise<void>;
 *   listen(handler: (message: unknown) => void): Promise<void>;
 *   [Symbol.asyncDispose](): Promise<void>;
 * }
 * let closed = false;
 * const siblings = new SiblingQueues((channel) => new MyQueue({ name: `jobs_${channel}` }), {
 *   assertOpen: () => {
 *     if (closed) throw new Error("closed");
 *   },
 * });
 * const images = siblings.derive("images");
 * closed = true;
 * await siblings.disposeAll();
 * ```
 * @typeParam Q The queue class.
 * @since 0.3.0
 */
export class SiblingQueues<Q extends AsyncDisposable> {
  readonly #create: (channel: string) => Q;
  readonly #assertOpen: () => void;
  readonly #siblings = new Map<string, Q>();

  /**
   * Creates an empty set of siblings.
   * @param create Makes the sibling for a channel that has none yet; the
   *               channel is already checked.
   * @param options `assertOpen` throws the backend's closed error once the
   *                deriving queue was disposed; it runs after the channel
   *                check and before any sibling is created or returned.
   * @since 0.3.0
   */
  constructor(
    create: (channel: string) => Q,
    options: { readonly assertOpen?: () => void } = {},
  ) {
    this.#create = create;
    this.#assertOpen = options.assertOpen ?? (() => {});
  }

  /**
   * Returns the sibling for `channel`, creating it on first use.
   * @param channel Lowercase letters, digits and underscores, 1 to 40.
   * @returns The same instance for the same channel.
   * @throws {TypeError} When the channel is malformed.
   * @throws Whatever `assertOpen` throws once the deriving queue is closed.
   * @since 0.3.0
   */
  derive(channel: string): Q {
    checkQueueChannel(channel);
    this.#assertOpen();
    let sibling = this.#siblings.get(channel);
    if (sibling == null) {
      sibling = this.#create(channel);
      this.#siblings.set(channel, sibling);
    }
    return sibling;
  }

  /**
   * Disposes every sibling created so far, concurrently.
   * @returns Resolves once all of them are disposed; rejects with the first
   *          error of a sibling whose disposal failed.
   * @since 0.3.0
   */
  async disposeAll(): Promise<void> {
    await Promise.all(
      [...this.#siblings.values()].map((sibling) => sibling[Symbol.asyncDispose]()),
    );
  }
}
