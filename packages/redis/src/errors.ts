import { QueueClosedError } from "@fedwork/core/queue-kit";

/**
 * Thrown by `RedisMessageQueue.enqueue()` and
 * `RedisMessageQueue.listen()` after the queue was disposed.
 *
 * Extends `QueueClosedError` from `@fedwork/core` since 0.2.0.
 * @since 0.1.0
 */
export class RedisMessageQueueClosedError extends QueueClosedError {
  /**
   * @param queue The queue's name.
   */
  constructor(queue: string) {
    super(
      `The RedisMessageQueue of queue ${JSON.stringify(queue)} has been disposed; ` +
        "create a new instance to use the queue again.",
    );
    this.name = "RedisMessageQueueClosedError";
  }
}

/**
 * Thrown by `redeliver()`, from the `MessageRedelivery` a
 * `RedisMessageQueue` hands its handlers, when the listener no longer
 * holds the message's lease (it ran out, e.g. because heartbeats could not
 * reach Redis, and the message may be running elsewhere).  Nothing was
 * changed; the message is handed out again as it was.
 * @since 0.2.0
 */
export class RedisLeaseLostError extends Error {
  /**
   * @param queue The queue's name.
   * @param messageId The id of the message whose lease was lost.
   */
  constructor(queue: string, messageId: string) {
    super(
      `Cannot redeliver message ${messageId} of queue ${JSON.stringify(queue)}: this ` +
        "listener's lease on it ran out, so it was left unchanged for whoever holds it " +
        "now. If this happens often, raise the leaseTime option.",
    );
    this.name = "RedisLeaseLostError";
  }
}
