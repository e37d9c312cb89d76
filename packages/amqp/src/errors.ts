import { QueueClosedError } from "@fedwork/core/queue-kit";

/**
 * Thrown when an {@link AmqpMessageQueue} cannot reach the broker, or loses
 * its connection before the broker confirmed a message.  An enqueue that
 * rejects with this error may or may not have reached the broker; retrying
 * it is safe for at-least-once consumers.
 * @since 0.1.0
 */
export class AmqpConnectionError extends Error {
  /**
   * Creates the error.
   * @param message What failed and how to fix it.
   * @param options The underlying error as `cause`.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AmqpConnectionError";
  }
}

/**
 * Thrown by the methods of an {@link AmqpMessageQueue} after it has been
 * disposed with `Symbol.asyncDispose`.
 *
 * Extends `QueueClosedError` from `@fedwork/core` since 0.3.0, like every
 * other backend's closed error.
 * @since 0.1.0
 */
export class AmqpMessageQueueClosedError extends QueueClosedError {
  /**
   * Creates the error.
   * @param queue The name of the closed queue.
   */
  constructor(queue: string) {
    super(
      `The AmqpMessageQueue for queue ${JSON.stringify(queue)} has been disposed; ` +
        "create a new instance to enqueue or listen again.",
    );
    this.name = "AmqpMessageQueueClosedError";
  }
}

/**
 * Thrown by `enqueue()` when the broker confirmed a message as unroutable:
 * its queue did not exist (it was deleted, or a delay queue expired).  The
 * message was not enqueued; the queues are declared again before the next
 * publish, so retrying succeeds.
 * @since 0.1.0
 */
export class AmqpUnroutableMessageError extends Error {
  /**
   * Creates the error.
   * @param queue The queue the message(s) were published to.
   * @param unroutable How many messages came back.
   * @param total How many messages were published in the call.
   */
  constructor(queue: string, unroutable: number, total: number) {
    super(
      `${unroutable} of ${total} message(s) published to the AMQP queue ` +
        `${JSON.stringify(queue)} could not be routed because the queue does not exist ` +
        "(deleted, or an expired delay queue); they were not enqueued. The queues will be " +
        "declared again, so retrying the enqueue succeeds.",
    );
    this.name = "AmqpUnroutableMessageError";
  }
}
