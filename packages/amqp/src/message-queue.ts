import {
  durationToMilliseconds,
  type MessageQueue,
  type MessageQueueDepth,
  type MessageQueueEnqueueOptions,
  type MessageQueueHandler,
  type MessageQueueListenOptions,
} from "@fedwork/core";
import {
  assertKnownOptions,
  checkMessagePriority,
  listenBatchSize,
  RunningListeners,
  SiblingQueues,
} from "@fedwork/core/queue-kit";
import type { Channel, ChannelModel } from "amqplib";
import { Buffer } from "node:buffer";
import { closeQuietly, openConnection } from "./connection.ts";
import {
  type AmqpMessageQueueConnectionOptions,
  FEDIFY_AMQP_HINTS,
  resolveConstructorArguments,
} from "./constructor-arguments.ts";
import { AmqpMessageQueueClosedError } from "./errors.ts";
import {
  type AmqpMessageQueueOptions,
  listenerPrefetch,
  resolveAmqpOptions,
  type ResolvedAmqpOptions,
} from "./options.ts";
import { AmqpPublisher } from "./publisher.ts";
import type { InFlightCounter } from "./delivery.ts";
import { runListener } from "./queue-listener.ts";
import {
  amqpPriority,
  consumedQueueArguments,
  consumedQueueNames,
  delayStepFor,
  explainInequivalentQueue,
  forgetDelayQueue,
  knownDelayQueueNames,
  targetQueueName,
} from "./topology.ts";

/**
 * A {@link MessageQueue} on an AMQP 0-9-1 broker such as RabbitMQ, through
 * `amqplib`.
 *
 * - Messages are JSON text in persistent messages on durable queues.
 * - A message is acknowledged only after its handler returned, so a worker
 *   that dies mid-handler leaves it unacknowledged and the broker delivers
 *   it again once the connection is gone.  A live worker's messages are never
 *   handed to another consumer; the broker's `consumer_timeout` (30 minutes
 *   by default) is the longest a handler may run before the broker closes
 *   the channel and requeues the message.
 * - A handler that throws does not lose its message (with the default
 *   `nativeRetrial: false`): it is handed out again after
 *   `redeliveryDelay`.  A message without an ordering key is published
 *   again into a delay queue and then acknowledged; a keyed one is held
 *   unacknowledged and run again, keeping its place.
 * - Handlers get a `MessageRedelivery` as their second argument.  AMQP
 *   cannot change a message in place, so `redeliver()` publishes the new
 *   version (confirmed) and acknowledges the original for a message without
 *   an ordering key, and, for a keyed one, holds the delivery and runs the
 *   handler again with the new version after the delay, up to
 *   `keyedHoldLimit`.  A held message whose process dies comes back from
 *   the broker in its original version (at least once).
 * - `enqueue()` resolves only once the broker confirmed the message
 *   (publisher confirms).
 * - Delays use delay queues (`<queue>.delay.<ms>`) whose message TTL
 *   dead-letters expired messages into the target queue; no broker plugin
 *   is needed.  A delay is rounded up to the next of a fixed ladder of 51
 *   steps (128 ms, 192 ms, 256 ms, 384 ms, ... each doubling split in two,
 *   up to about 49.7 days), so a message is never handed out earlier than
 *   asked, at most half as long again later (for delays above 128 ms), and
 *   a target queue never has more than 51 delay queues.
 * - Messages with an ordering key go to one of `orderingPartitions` queues
 *   (`<queue>.ordered.<i>`) chosen by a hash of the key, each with a single
 *   active consumer and prefetch 1.
 *
 * @example
 * ```ts
 * import { AmqpMessageQueue } from "@fedwork/amqp";
 *
 * await using queue = new AmqpMessageQueue({
 *   url: "amqp://guest:guest@127.0.0.1:5672",
 *   queue: "my-app",
 *   concurrency: 8,
 * });
 * await queue.enqueue({ hello: "world" }, { delay: { seconds: 5 } });
 * const controller = new AbortController();
 * const listening = queue.listen((message) => console.log(message), {
 *   signal: controller.signal,
 * });
 * controller.abort();
 * await listening;
 * ```
 * @since 0.1.0
 */
export class AmqpMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * Whether the broker retries a failed message itself (see
   * {@link AmqpMessageQueueOptions.nativeRetrial}).
   * @since 0.1.0
   */
  readonly nativeRetrial: boolean;

  /**
   * How many handlers one `listen()` call runs at once: the
   * `concurrency` option.  `listWorkers()` shows it for the workers that
   * listen to this queue.
   * @returns The resolved `concurrency` option.
   * @since 0.3.0
   */
  get concurrency(): number {
    return this.#options.concurrency;
  }

  readonly #options: ResolvedAmqpOptions;
  readonly #given: AmqpMessageQueueOptions;
  readonly #siblings: SiblingQueues<AmqpMessageQueue> = new SiblingQueues(
    (channel) => this.#createSibling(channel),
    { assertOpen: () => this.#assertOpen() },
  );
  readonly #publisher: AmqpPublisher;
  /** The running listen() calls; closing it marks this instance disposed. */
  readonly #listeners = new RunningListeners();
  readonly #counter: InFlightCounter = { inFlight: 0 };
  #depthState: Promise<{ model: ChannelModel; channel: Channel }> | undefined;

  /**
   * Creates the queue.  No connection is opened until the first call that
   * needs one.
   * @param options The broker URL, queue name and behaviour.
   * @throws {TypeError} When an option has the wrong type.
   * @throws {RangeError} When an option is out of range; the message names it.
   * @since 0.1.0
   */
  constructor(options?: AmqpMessageQueueOptions);
  /**
   * Creates the queue on an open `amqplib` connection, as `@fedify/amqp`'s
   * `new AmqpMessageQueue(connection, options?)` does: the queue opens its
   * channels on that connection and never closes it (see
   * {@link AmqpMessageQueueOptions.connection}).  Fedify's `queue`,
   * `durable` and `nativeRetrial` mean the same here, and its
   * `ordering.partitions` becomes `orderingPartitions`; its
   * `delayedQueuePrefix`, `ordering.exchange` and `ordering.queuePrefix`
   * are refused with the reason.  Fedwork's other options may follow too.
   * @param connection An open connection, from `amqplib`'s `connect()`.
   * @param options The queue name and behaviour.
   * @throws {TypeError} When the first argument is neither a connection
   *                     nor options, or an option is unknown or has the
   *                     wrong type.
   * @throws {RangeError} When an option is out of range.
   * @since 0.4.0
   */
  constructor(connection: ChannelModel, options?: AmqpMessageQueueConnectionOptions);
  constructor(
    first?: AmqpMessageQueueOptions | ChannelModel,
    second?: AmqpMessageQueueConnectionOptions,
  ) {
    const options = resolveConstructorArguments(first, second);
    assertKnownOptions(options, [
      "url",
      "connection",
      "queue",
      "concurrency",
      "prefetch",
      "orderingPartitions",
      "nativeRetrial",
      "redeliveryDelay",
      "keyedHoldLimit",
      "durable",
      "maxReconnectDelay",
      "priorities",
      "queueType",
    ], { where: "new AmqpMessageQueue()", hints: FEDIFY_AMQP_HINTS });
    this.#given = options;
    this.#options = resolveAmqpOptions(options);
    this.nativeRetrial = this.#options.nativeRetrial;
    this.#publisher = new AmqpPublisher(this.#options);
  }

  /**
   * Whether the queue orders messages by priority: the `priorities`
   * option.  Without it, a priority other than 0 is refused.
   * @since 0.3.0
   */
  get nativePriority(): boolean {
    return this.#options.priorities;
  }

  /**
   * The name of the main queue.
   * @since 0.1.0
   */
  get queue(): string {
    return this.#options.queue;
  }

  /**
   * Adds a message; resolves once the broker confirmed it.
   * @param message A JSON-compatible value.
   * @param options Delay, ordering key and priority (with `priorities`).
   * @throws {AmqpConnectionError} When the broker is unreachable or the
   *         connection drops before the confirm.
   * @throws {AmqpUnroutableMessageError} When the queue was deleted under it.
   * @throws {RangeError} When the delay is negative or longer than about
   *         49.7 days (RabbitMQ's longest message TTL), or the priority is
   *         not an integer from -5 to 5.
   * @throws {TypeError} When a priority other than 0 is given without the
   *         `priorities` option.
   * @throws {AmqpMessageQueueClosedError} After dispose.
   * @since 0.1.0
   */
  // deno-lint-ignore no-explicit-any
  enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void> {
    return this.enqueueMany([message], options);
  }

  /**
   * Adds several messages, in order, in one batch of publishes confirmed
   * together.
   * @param messages JSON-compatible values.
   * @param options Delay, ordering key and priority (with `priorities`),
   *                applied to every message.
   * @throws {AmqpConnectionError} When the broker is unreachable or the
   *         connection drops before the confirms.
   * @throws {AmqpUnroutableMessageError} When the queue was deleted under it.
   * @throws {RangeError} When the delay is negative or longer than about
   *         49.7 days (RabbitMQ's longest message TTL), or the priority is
   *         not an integer from -5 to 5.
   * @throws {TypeError} When a priority other than 0 is given without the
   *         `priorities` option.
   * @throws {AmqpMessageQueueClosedError} After dispose.
   * @since 0.1.0
   */
  // deno-lint-ignore no-explicit-any
  async enqueueMany(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void> {
    this.#assertOpen();
    const delayMs = options?.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    // Checked before anything is sent: a delay no delay queue can give.
    if (delayMs > 0) delayStepFor(delayMs);
    const priority = checkMessagePriority(options?.priority);
    if (priority !== 0 && !this.#options.priorities) {
      throw new TypeError(
        `The AMQP queue ${JSON.stringify(this.#options.queue)} was not created with ` +
          `priorities: true, so it cannot honour the priority option (${priority}).`,
      );
    }
    const encoded = messages.map((message) => Buffer.from(JSON.stringify(message), "utf8"));
    if (encoded.length === 0) return;
    const target = targetQueueName(this.#options, options?.orderingKey);
    await this.#publisher.publish(encoded, target, delayMs, amqpPriority(this.#options, priority));
  }

  /**
   * Consumes messages until `options.signal` aborts (or the queue is
   * disposed), running up to `concurrency` handlers at once.  A handler that
   * throws is logged under `["fedwork", "amqp"]` and its message handed out
   * again after `redeliveryDelay` (or at once by the broker, with
   * `nativeRetrial`).  Each handler gets a `MessageRedelivery` as its second
   * argument; its `redeliver()` rejects with `AmqpConnectionError`
   * when the listener's channel closed or the new version could not be
   * published.  A dropped connection is logged and reconnected with backoff;
   * listening never stops on its own.
   * With `options.batchSize` (a handler that collects runs of that many
   * messages), the main queue's consumer prefetch is at least twice the
   * batch size, so that one run fills while the previous one is being
   * acknowledged.
   * @param handler Processes one message.
   * @param options The abort signal and the batch size.
   * @returns Resolves after the abort, once the running handlers finished.
   * @throws {AmqpMessageQueueClosedError} After dispose.
   * @throws {RangeError} When `options.batchSize` is not a positive integer.
   * @since 0.1.0
   */
  async listen(handler: MessageQueueHandler, options?: MessageQueueListenOptions): Promise<void> {
    this.#assertOpen();
    const batchSize = listenBatchSize(options);
    const signal = this.#listeners.signal(options?.signal);
    if (signal.aborted) return;
    const prefetch = listenerPrefetch(this.#options.prefetch, batchSize);
    await this.#listeners.track(runListener(
      prefetch === this.#options.prefetch ? this.#options : { ...this.#options, prefetch },
      handler,
      this.#publisher,
      signal,
      this.#counter,
    ));
  }

  /**
   * Reports the queue's depth: `ready` is the sum of the main and partition
   * queues' ready counts, `delayed` the sum over the delay queues this
   * process declared (delay queues declared only by other processes are not
   * seen), and `queued` adds the messages handed to this instance's
   * listeners and not yet settled.  Messages unacknowledged in other
   * processes are not counted.
   * @returns The depth.
   * @throws {AmqpConnectionError} When the broker is unreachable.
   * @since 0.1.0
   */
  async getDepth(): Promise<MessageQueueDepth> {
    this.#assertOpen();
    let ready = 0;
    const state = await this.#depthChannel();
    const counts = await Promise.all(
      consumedQueueNames(this.#options).map((name) =>
        state.channel.assertQueue(name, consumedQueueArguments(this.#options, name))
      ),
    ).catch((error) => {
      this.#depthState = undefined;
      throw explainInequivalentQueue(error, this.#options);
    });
    for (const reply of counts) ready += reply.messageCount;
    let delayed = 0;
    for (const name of knownDelayQueueNames(this.#options.queue)) {
      const { channel } = await this.#depthChannel();
      try {
        delayed += (await channel.checkQueue(name)).messageCount;
      } catch {
        // The delay queue expired (x-expires); the 404 closed the channel.
        forgetDelayQueue(this.#options.queue, name);
        this.#depthState = undefined;
      }
    }
    return { queued: ready + delayed + this.#counter.inFlight, ready, delayed };
  }

  /**
   * Deletes the main queue, its partition queues and the delay queues this
   * process declared, with every message in them.  For tests and teardown.
   * @throws {AmqpConnectionError} When the broker is unreachable.
   * @since 0.1.0
   */
  async deleteQueues(): Promise<void> {
    this.#assertOpen();
    const names = [
      ...knownDelayQueueNames(this.#options.queue),
      ...consumedQueueNames(this.#options),
    ];
    for (const name of names) {
      const { channel } = await this.#depthChannel();
      await channel.deleteQueue(name);
      forgetDelayQueue(this.#options.queue, name);
    }
  }

  /**
   * Returns a sibling queue for capability routing: the same broker and
   * settings under the main queue name `<queue>.<channel>` (with its own
   * partition and delay queues), opening connections of its own.  The
   * same channel gives the same sibling; it is disposed of with this queue.
   * @param channel Lowercase letters, digits and underscores.
   * @returns The sibling.
   * @throws {TypeError} When the channel is malformed.
   * @throws {AmqpMessageQueueClosedError} After dispose.
   * @since 0.2.0
   */
  derive(channel: string): AmqpMessageQueue {
    return this.#siblings.derive(channel);
  }

  #createSibling(channel: string): AmqpMessageQueue {
    return new AmqpMessageQueue({
      ...this.#given,
      queue: `${this.#options.queue}.${channel}`,
    });
  }

  /**
   * Stops this instance's listeners (waiting for their running handlers)
   * and closes the connections it opened.  Queues and messages stay on the
   * broker.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#listeners.closed) return;
    // Closing marks this instance disposed at once; its listeners stop
    // while the siblings are disposed of.
    const listenersStopped = this.#listeners.close();
    await this.#siblings.disposeAll();
    await listenersStopped;
    await this.#publisher.close();
    const depth = this.#depthState;
    this.#depthState = undefined;
    if (depth != null) await depth.then(({ model }) => closeQuietly(model), () => {});
  }

  #assertOpen(): void {
    if (this.#listeners.closed) throw new AmqpMessageQueueClosedError(this.#options.queue);
  }

  /** A connection and channel for queue inspection, opened on demand. */
  #depthChannel(): Promise<{ model: ChannelModel; channel: Channel }> {
    if (this.#depthState != null) return this.#depthState;
    const forget = () => {
      // Only forget this connection, not a newer one.
      if (this.#depthState === opening) this.#depthState = undefined;
    };
    const opening = (async () => {
      const model = await openConnection(
        this.#options,
        `fedwork ${this.#options.queue} inspector`,
        () => {},
      );
      model.on("close", forget);
      try {
        const channel = await model.createChannel();
        // A 404 from checkQueue() closes the channel; "close" handles it.
        channel.on("error", () => {});
        channel.on("close", () => {
          forget();
          void closeQuietly(model);
        });
        return { model, channel };
      } catch (error) {
        await closeQuietly(model);
        throw error;
      }
    })();
    opening.catch(forget);
    this.#depthState = opening;
    return opening;
  }
}
