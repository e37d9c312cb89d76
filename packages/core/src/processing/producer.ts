// The one path by which core puts messages into a MessageQueue.  Whatever
// every enqueued message must get (the enqueue span and its trace context,
// the due time, the enqueue metric, the workers' auto-start) is done here
// once, so that a new stamp, metric or hook is written once.
import { getLogger } from "@logtape/logtape";
import { SpanKind, type Tracer } from "@opentelemetry/api";
import { handOverMessages, keepsMessages } from "../queue/message-ownership.ts";
import type {
  MessageQueue,
  MessageQueueDeduplicatedEnqueueOptions,
  MessageQueueEnqueueOptions,
} from "../queue/message-queue.ts";
import { durationToMilliseconds } from "../time/duration.ts";
import type { BaseMessage } from "./envelope.ts";
import { traceContextOf, withSpan } from "./tracing.ts";

const logger = getLogger(["fedwork", "processing"]);

/**
 * Hands messages to a queue as they are: one `enqueue()`, or
 * `enqueueMany()` for several when the queue has it, else parallel
 * `enqueue()` calls.  The only place in core that calls a queue's
 * `enqueue()` or `enqueueMany()`; {@link MessageProducer} and the
 * dispatcher's retries go through it.  Internal.
 * @param queue The queue.
 * @param messages The messages, already stamped.
 * @param options The enqueue options.
 * @since 0.2.0
 */
export async function sendToQueue(
  queue: MessageQueue,
  messages: readonly BaseMessage[],
  options: MessageQueueEnqueueOptions,
): Promise<void> {
  if (messages.length === 1) await queue.enqueue(messages[0], options);
  else if (queue.enqueueMany != null) await queue.enqueueMany(messages, options);
  else await Promise.all(messages.map((message) => queue.enqueue(message, options)));
}

/**
 * What a {@link MessageProducer} counts enqueued messages with
 * (`MessageMetrics` has it).  Internal.
 * @since 0.2.0
 */
export interface EnqueueCounter {
  /**
   * Counts messages put into a queue.
   * @param messages The messages.
   */
  recordEnqueued(messages: readonly BaseMessage[]): void;
}

/**
 * What a {@link MessageProducer} needs.  Internal.
 * @typeParam TContextData The context data the workers are started with.
 * @since 0.2.0
 */
export interface MessageProducerOptions<TContextData> {
  /** Opens the enqueue spans. */
  readonly tracer: Tracer;
  /** Counts what was enqueued. */
  readonly metrics: EnqueueCounter;
  /**
   * Starts the queue workers; called once, by the first enqueue that
   * passes context data.  Without it, enqueueing never starts workers.
   */
  readonly start?: (contextData: TContextData) => Promise<void>;
}

/**
 * Hooks and the auto-start of one {@link MessageProducer.produce} call.
 * Internal.
 * @since 0.2.0
 */
export interface ProduceOptions<TContextData, TMessage extends BaseMessage> {
  /** Starts the workers first (once per producer) with this context data. */
  readonly start?: { readonly contextData: TContextData };
  /** Runs with the stamped messages before they go into the queue. */
  readonly before?: (stamped: readonly TMessage[]) => Promise<void>;
  /** Runs with the stamped messages when the queue did not take them. */
  readonly notSent?: (stamped: readonly TMessage[]) => Promise<void>;
}

/**
 * Puts messages into queues: opens the enqueue span, stamps its trace
 * context and the due time into fresh copies of the messages, hands them
 * over (with `enqueueMany()` when it can), counts them, and starts the
 * workers on the first enqueue that may.  Internal.
 * @typeParam TContextData The context data the workers are started with.
 * @since 0.2.0
 */
export class MessageProducer<TContextData> {
  readonly #options: MessageProducerOptions<TContextData>;
  #started = false;

  /**
   * @param options The tracer, the metrics and how to start workers.
   */
  constructor(options: MessageProducerOptions<TContextData>) {
    this.#options = options;
  }

  /**
   * Enqueues messages into one queue.
   * @param queue The queue.
   * @param messages The messages (not modified: stamped copies are sent).
   * @param options The enqueue options (their `delay` sets the due time).
   * @param hooks The context data to start workers with, and hooks around
   *              the hand-over.
   * @throws What the queue or a hook throws.
   */
  async produce<TMessage extends BaseMessage>(
    queue: MessageQueue,
    messages: readonly TMessage[],
    options: MessageQueueEnqueueOptions = {},
    hooks: ProduceOptions<TContextData, TMessage> = {},
  ): Promise<void> {
    if (messages.length === 0) return;
    await this.#stamped(queue, messages, options, hooks.start, async (stamped) => {
      await hooks.before?.(stamped);
      try {
        await sendToQueue(queue, stamped, options);
      } catch (error) {
        await hooks.notSent?.(stamped);
        throw error;
      }
      this.#options.metrics.recordEnqueued(stamped);
      // Lazily: the ids are mapped only when debug logs are on.
      logger.debug("Enqueued {count} {messageType} messages.", () => ({
        count: stamped.length,
        messageType: stamped[0].type,
        messageIds: stamped.map((message) => message.id),
      }));
    });
  }

  /**
   * Enqueues one message with the queue's `enqueueDeduplicated()`.
   * @param queue The queue; must have `enqueueDeduplicated()`.
   * @param message The message.
   * @param options The enqueue and deduplication options.
   * @param hooks As for {@link MessageProducer.produce}; `notSent` also
   *              runs when the queue deduplicated the message.
   * @returns Whether the queue added it.
   * @throws What the queue or a hook throws.
   */
  async produceDeduplicated<TMessage extends BaseMessage>(
    queue: MessageQueue,
    message: TMessage,
    options: MessageQueueDeduplicatedEnqueueOptions,
    hooks: ProduceOptions<TContextData, TMessage> = {},
  ): Promise<boolean> {
    return await this.#stamped(queue, [message], options, hooks.start, async (stamped) => {
      await hooks.before?.(stamped);
      let added = false;
      try {
        added = await queue.enqueueDeduplicated!(stamped[0], options);
      } finally {
        if (!added) await hooks.notSent?.(stamped);
      }
      if (added) this.#options.metrics.recordEnqueued(stamped);
      return added;
    });
  }

  #stamped<TMessage extends BaseMessage, T>(
    queue: MessageQueue,
    messages: readonly TMessage[],
    options: MessageQueueEnqueueOptions,
    start: { readonly contextData: TContextData } | undefined,
    send: (stamped: readonly TMessage[]) => Promise<T>,
  ): Promise<T> {
    const startWorkers = this.#options.start;
    if (start != null && startWorkers != null && !this.#started) {
      this.#started = true;
      startWorkers(start.contextData).catch((error) => {
        logger.error("A queue worker stopped with an error: {error}", { error });
      });
    }
    const taskName = (messages[0] as { readonly taskName?: unknown }).taskName;
    return withSpan(
      this.#options.tracer,
      "fedwork.queue.enqueue",
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          "fedwork.message.type": messages[0].type,
          "fedwork.message.count": messages.length,
          ...(messages[0].type === "task" && typeof taskName === "string"
            ? { "fedwork.task.name": taskName }
            : {}),
        },
      },
      (span) => {
        const traceContext = traceContextOf(span);
        const delayMs = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
        const keeps = keepsMessages(queue);
        // A task's first attempt without a delay is due when it was
        // enqueued, which its `started` says already (queue-wait metrics
        // read that when `dueAt` is absent, as Fedwork has since 0.2): a
        // queue that stores messages as text gets them without the
        // timestamp's forty bytes.  An in-memory queue keeps the objects
        // (nothing to save there, and its drains measured slower without
        // the field); other kinds keep it too, since a fan-out's
        // deliveries share one `started` but are enqueued over seconds.
        const dueAt = delayMs === 0 && !keeps && isFreshTaskBatch(messages)
          ? undefined
          : new Date(Date.now() + delayMs).toISOString();
        const stamped = dueAt === undefined
          ? messages.map((message) => ({ ...message, traceContext }))
          : messages.map((message) => ({ ...message, traceContext, dueAt }));
        // Fresh objects nothing else holds: an in-memory queue may keep them
        // without copying them (the others serialize them: no mark needed).
        return send(keeps ? handOverMessages(stamped) : stamped);
      },
    );
  }
}

/** Whether every message is a task on its first attempt. */
function isFreshTaskBatch(messages: readonly BaseMessage[]): boolean {
  for (const message of messages) {
    if (message.type !== "task" || message.attempt !== 0) return false;
  }
  return true;
}
