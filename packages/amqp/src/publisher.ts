// Publishing with publisher confirms, so that enqueue() resolves only once
// the broker has taken responsibility for every message.
import { getLogger } from "@logtape/logtape";
import type { ChannelModel, ConfirmChannel, Message } from "amqplib";
import { closeQuietly, describeError, openConnection, redactUrl } from "./connection.ts";
import { AmqpConnectionError, AmqpUnroutableMessageError } from "./errors.ts";
import type { ResolvedAmqpOptions } from "./options.ts";
import {
  declareConsumedQueues,
  DELAY_QUEUE_GRACE_MS,
  delayQueueArguments,
  delayQueueName,
  delayStepFor,
  rememberDelayQueue,
} from "./topology.ts";

const logger = getLogger(["fedwork", "amqp"]);

/**
 * A delay queue declared longer ago than this is declared again before the
 * next publish to it: publishing does not count as use for `x-expires`, so
 * without this a queue that expired while the connection stayed open would
 * swallow messages.  Half of the queues' grace period.
 */
const DELAY_QUEUE_REDECLARE_MS = DELAY_QUEUE_GRACE_MS / 2;

interface PublisherState {
  readonly model: ChannelModel;
  readonly channel: ConfirmChannel;
  /** When each delay queue was last declared on this connection. */
  readonly declaredAt: Map<string, number>;
  /** The ids of messages the broker returned as unroutable. */
  readonly returned: Set<string>;
  /** Set when a message came back unroutable: declare everything again. */
  stale: boolean;
}

/**
 * One connection and confirm channel for publishing, opened on first use and
 * opened again on the next publish after it dropped.
 */
export class AmqpPublisher {
  readonly #options: ResolvedAmqpOptions;
  #state: Promise<PublisherState> | undefined;
  #nextMessageId = 0;

  constructor(options: ResolvedAmqpOptions) {
    this.#options = options;
  }

  /**
   * Publishes the messages, in order, to `target` (after `delayMs` rounded
   * up to a delay step, through that step's delay queue) and resolves when
   * the broker confirmed all of them.
   * @throws {AmqpConnectionError} When the connection fails or drops before
   *         every message was confirmed.
   * @throws {AmqpUnroutableMessageError} When the target queue did not exist.
   * @param priority The AMQP priority to publish with (see
   *                 `amqpPriority()`), if any; kept when a delay queue
   *                 dead-letters the message.
   * @throws {RangeError} When `delayMs` is longer than the longest delay.
   */
  async publish(
    encoded: readonly Buffer[],
    target: string,
    delayMs: number,
    priority?: number,
  ): Promise<void> {
    const stepMs = delayMs > 0 ? delayStepFor(delayMs) : 0;
    const state = await this.#ensure();
    const { channel } = state;
    let queue = target;
    const ids: string[] = [];
    try {
      if (state.stale) {
        state.stale = false;
        state.declaredAt.clear();
        await declareConsumedQueues(channel, this.#options);
      }
      if (stepMs > 0) {
        queue = delayQueueName(target, stepMs);
        const declaredAt = state.declaredAt.get(queue);
        if (declaredAt == null || Date.now() - declaredAt > DELAY_QUEUE_REDECLARE_MS) {
          await channel.assertQueue(queue, delayQueueArguments(this.#options, target, stepMs));
          state.declaredAt.set(queue, Date.now());
          rememberDelayQueue(this.#options.queue, queue);
        }
      }
      const confirms: Promise<void>[] = [];
      for (const content of encoded) {
        let writable = true;
        const messageId = `${this.#nextMessageId++}`;
        ids.push(messageId);
        confirms.push(
          new Promise<void>((resolve, reject) => {
            writable = channel.sendToQueue(queue, content, {
              persistent: this.#options.durable,
              contentType: "application/json",
              messageId,
              ...(priority == null ? {} : { priority }),
              // An unroutable message comes back (before its confirm) instead
              // of being confirmed and dropped.
              mandatory: true,
            }, (error) => error == null ? resolve() : reject(error));
          }),
        );
        // The socket's buffer is full: wait before writing more, so that a
        // large enqueueMany() does not hold every frame in memory.
        if (!writable) await waitForDrain(channel);
      }
      await Promise.all(confirms);
    } catch (error) {
      for (const id of ids) state.returned.delete(id);
      throw new AmqpConnectionError(
        `The AMQP broker at ${redactUrl(this.#options.url)} did not confirm the message(s) ` +
          `for queue ${JSON.stringify(queue)}: ${describeError(error)}. ` +
          "They may or may not have been enqueued.",
        { cause: error },
      );
    }
    const unroutable = ids.filter((id) => state.returned.delete(id)).length;
    if (unroutable > 0) {
      state.stale = true;
      throw new AmqpUnroutableMessageError(queue, unroutable, encoded.length);
    }
  }

  /** Closes the connection, if open. */
  async close(): Promise<void> {
    const state = this.#state;
    this.#state = undefined;
    if (state == null) return;
    try {
      const { model } = await state;
      await closeQuietly(model);
    } catch {
      // The connection never opened.
    }
  }

  #ensure(): Promise<PublisherState> {
    if (this.#state == null) {
      const opening = this.#open(() => {
        // Only forget this connection, not a newer one.
        if (this.#state === opening) this.#state = undefined;
      });
      this.#state = opening;
    }
    return this.#state;
  }

  async #open(forget: () => void): Promise<PublisherState> {
    let model: ChannelModel | undefined;
    try {
      model = await openConnection(
        this.#options.url,
        `fedwork ${this.#options.queue} publisher`,
        (error) => logger.warn("The AMQP publisher connection failed: {error}", { error }),
      );
      model.on("close", forget);
      const channel = await model.createConfirmChannel();
      const returned = new Set<string>();
      channel.on("return", (message: Message) => {
        const id = message.properties.messageId;
        if (typeof id === "string") returned.add(id);
      });
      channel.on("error", (error) => {
        logger.warn("The AMQP publisher channel failed: {error}", { error });
      });
      channel.on("close", () => {
        forget();
        void closeQuietly(model);
      });
      // Messages dead-lettered from a delay queue into a queue that does not
      // exist would be dropped, so the targets exist before any publish.
      await declareConsumedQueues(channel, this.#options);
      return { model, channel, declaredAt: new Map(), returned, stale: false };
    } catch (error) {
      forget();
      await closeQuietly(model);
      if (error instanceof AmqpConnectionError) throw error;
      throw new AmqpConnectionError(
        `Could not set up publishing to the AMQP broker at ${redactUrl(this.#options.url)}: ` +
          `${describeError(error)}.`,
        { cause: error },
      );
    }
  }
}

/** Waits until the channel's write buffer has room again (or it closed). */
function waitForDrain(channel: ConfirmChannel): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      channel.off("drain", done);
      channel.off("close", done);
      resolve();
    };
    channel.on("drain", done);
    channel.on("close", done);
  });
}
