import { getLogger } from "@logtape/logtape";
import { SpanKind, type Tracer } from "@opentelemetry/api";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import type { Message } from "./message.ts";
import { extractTraceContext, withSpan } from "./tracing.ts";

const logger = getLogger(["fedwork", "queue"]);

/**
 * How the worker processes one message `type`.  The federation registers
 * one per type (`inbox`, `outbox`, `fanout`; `task` is added by the tasks
 * module the same way).
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export interface MessageHandler<TContextData> {
  /**
   * Processes the message.  Throwing means "failed, retry"; returning
   * normally (even after logging a problem) means "done, drop".
   * @param message The message (its `type` is the one registered).
   * @param contextData The worker's context data.
   * @param queue The queue the message came from (for
   *              `processQueuedMessage()`, {@link MessageHandler.queue}'s
   *              answer), for handlers that retry on their own: such a
   *              handler re-enqueues into it and returns normally, or
   *              rethrows when it has `nativeRetrial`.
   */
  handle(
    message: Message,
    contextData: TContextData,
    queue: MessageQueue | undefined,
  ): Promise<void>;

  /**
   * The retry policy for a failed message of this type.
   * @param message The failed message.
   */
  retryPolicy(message: Message): RetryPolicy;

  /**
   * The queue to re-enqueue a failed message into when it was not received
   * from a queue (`processQueuedMessage()`), or `undefined` to give up.
   * @param message The failed message.
   */
  queue(message: Message): MessageQueue | undefined;
}

/**
 * Processes queue messages: finds the handler registered for each message's
 * `type`, runs it in a span whose parent is the enqueuing span, and applies
 * the retry policy on failure.  A bad message never stops a listener.
 * @typeParam TContextData The context data type.
 * @since 0.1.0
 */
export class MessageWorker<TContextData> {
  readonly #handlers = new Map<string, MessageHandler<TContextData>>();
  readonly #tracer: Tracer;

  /** @param tracer The tracer for processing spans. */
  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  /**
   * Registers the handler for a message type, replacing any previous one.
   * @param type The message `type`, e.g. `"task"`.
   * @param handler The handler.
   */
  register(type: Message["type"], handler: MessageHandler<TContextData>): void {
    this.#handlers.set(type, handler);
  }

  /**
   * Listens to a queue until `signal` aborts, processing every message.
   * @param queue The queue.
   * @param contextData The context data for the contexts handlers build.
   * @param signal Stops listening.
   * @returns Resolves when the queue's listener has stopped.
   */
  async listen(
    queue: MessageQueue,
    contextData: TContextData,
    signal?: AbortSignal,
  ): Promise<void> {
    await queue.listen(
      (message: unknown) => this.process(message, contextData, queue),
      { signal },
    );
  }

  /**
   * Processes one message.  Errors are retried (re-enqueued with
   * `attempt + 1` after the policy's delay) or, for a queue with
   * `nativeRetrial`, rethrown to the queue.
   * @param message The message.
   * @param contextData The context data.
   * @param source The queue the message came from, if any.
   * @throws When `source.nativeRetrial` is set and the handler failed.
   */
  async process(message: unknown, contextData: TContextData, source?: MessageQueue): Promise<void> {
    if (!isMessage(message)) {
      logger.warn("Dropped a queue message that is not a Fedwork message: {message}.", {
        message,
      });
      return;
    }
    const handler = this.#handlers.get(message.type);
    if (handler == null) {
      logger.warn(
        "Dropped message {messageId}: no handler for message type {messageType}.",
        { messageId: message.id, messageType: message.type },
      );
      return;
    }
    const queue = source ?? handler.queue(message);
    try {
      await withSpan(
        this.#tracer,
        "fedwork.queue.process",
        {
          kind: SpanKind.CONSUMER,
          parent: extractTraceContext(message.traceContext ?? {}),
          attributes: {
            "fedwork.message.id": message.id,
            "fedwork.message.type": message.type,
            "fedwork.message.attempt": message.attempt,
          },
        },
        () => handler.handle(message, contextData, queue),
      );
    } catch (error) {
      if (queue?.nativeRetrial) {
        logger.warn(
          "Message {messageId} ({messageType}) failed on attempt {attempt}; the queue will " +
            "retry it: {error}",
          { messageId: message.id, messageType: message.type, attempt: message.attempt, error },
        );
        throw error;
      }
      await this.#retry(message, handler, queue, error);
    }
  }

  async #retry(
    message: Message,
    handler: MessageHandler<TContextData>,
    queue: MessageQueue | undefined,
    error: unknown,
  ): Promise<void> {
    const attempts = message.attempt + 1;
    const properties = { messageId: message.id, messageType: message.type, attempts, error };
    let delay;
    try {
      const started = Date.parse(message.started);
      const elapsed = Number.isNaN(started) ? 0 : Math.max(0, Date.now() - started);
      delay = handler.retryPolicy(message)({
        elapsedTime: millisecondsToDuration(elapsed),
        attempts,
      });
    } catch (policyError) {
      logger.error(
        "Gave up on message {messageId} ({messageType}) after {attempts} attempts: the " +
          "retry policy threw {policyError}.  Last error: {error}",
        { ...properties, policyError },
      );
      return;
    }
    if (delay == null || queue == null) {
      logger.error(
        "Gave up on message {messageId} ({messageType}) after {attempts} attempts: {error}",
        properties,
      );
      return;
    }
    logger.warn(
      "Message {messageId} ({messageType}) failed on attempt {attempts}; retrying in " +
        "{delay}: {error}",
      { ...properties, delay: delay.toString() },
    );
    try {
      await queue.enqueue(
        { ...message, attempt: attempts },
        { delay, ...(message.orderingKey == null ? {} : { orderingKey: message.orderingKey }) },
      );
    } catch (enqueueError) {
      logger.error(
        "Gave up on message {messageId} ({messageType}) after {attempts} attempts: " +
          "re-enqueueing failed with {enqueueError}.  Last error: {error}",
        { ...properties, enqueueError },
      );
    }
  }
}

function isMessage(value: unknown): value is Message {
  if (typeof value !== "object" || value == null) return false;
  const message = value as Record<string, unknown>;
  return typeof message.type === "string" && typeof message.id === "string" &&
    typeof message.attempt === "number";
}
