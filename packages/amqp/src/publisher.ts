// Publishing with publisher confirms, so that enqueue() resolves only once
// the broker has taken responsibility for every message.
import { getLogger } from "@logtape/logtape";
import type { ChannelModel, ConfirmChannel } from "amqplib";
import { closeQuietly, describeError, openConnection, redactUrl } from "./connection.ts";
import { AmqpConnectionError } from "./errors.ts";
import type { ResolvedAmqpOptions } from "./options.ts";
import {
  declareConsumedQueues,
  delayQueueArguments,
  delayQueueName,
  rememberDelayQueue,
} from "./topology.ts";

const logger = getLogger(["fedwork", "amqp"]);

interface PublisherState {
  readonly model: ChannelModel;
  readonly channel: ConfirmChannel;
  /** Delay queues declared on this connection. */
  readonly declared: Set<string>;
}

/**
 * One connection and confirm channel for publishing, opened on first use and
 * opened again on the next publish after it dropped.
 */
export class AmqpPublisher {
  readonly #options: ResolvedAmqpOptions;
  #state: Promise<PublisherState> | undefined;

  constructor(options: ResolvedAmqpOptions) {
    this.#options = options;
  }

  /**
   * Publishes the messages, in order, to `target` (after `delayMs`, through
   * a delay queue) and resolves when the broker confirmed all of them.
   * @throws {AmqpConnectionError} When the connection fails or drops before
   *         every message was confirmed.
   */
  async publish(encoded: readonly Buffer[], target: string, delayMs: number): Promise<void> {
    const state = await this.#ensure();
    const { channel } = state;
    let queue = target;
    try {
      if (delayMs > 0) {
        queue = delayQueueName(target, delayMs);
        if (!state.declared.has(queue)) {
          await channel.assertQueue(queue, delayQueueArguments(this.#options, target, delayMs));
          state.declared.add(queue);
          rememberDelayQueue(this.#options.queue, queue);
        }
      }
      const confirms: Promise<void>[] = [];
      for (const content of encoded) {
        let writable = true;
        confirms.push(
          new Promise<void>((resolve, reject) => {
            writable = channel.sendToQueue(queue, content, {
              persistent: this.#options.durable,
              contentType: "application/json",
            }, (error) => error == null ? resolve() : reject(error));
          }),
        );
        // The socket's buffer is full: wait before writing more, so that a
        // large enqueueMany() does not hold every frame in memory.
        if (!writable) await waitForDrain(channel);
      }
      await Promise.all(confirms);
    } catch (error) {
      throw new AmqpConnectionError(
        `The AMQP broker at ${redactUrl(this.#options.url)} did not confirm the message(s) ` +
          `for queue ${JSON.stringify(queue)}: ${describeError(error)}. ` +
          "They may or may not have been enqueued.",
        { cause: error },
      );
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
    this.#state ??= this.#open();
    return this.#state;
  }

  async #open(): Promise<PublisherState> {
    const forget = () => {
      this.#state = undefined;
    };
    let model: ChannelModel | undefined;
    try {
      model = await openConnection(
        this.#options.url,
        `fedwork ${this.#options.queue} publisher`,
        (error) => logger.warn("The AMQP publisher connection failed: {error}", { error }),
      );
      model.on("close", forget);
      const channel = await model.createConfirmChannel();
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
      return { model, channel, declared: new Set() };
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
