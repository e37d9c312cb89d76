// Publishing with publisher confirms, so that enqueue() resolves only once
// the broker has taken responsibility for every message.
import { getLogger } from "@logtape/logtape";
import type { ChannelModel, ConfirmChannel, Message } from "amqplib";
import { closeQuietly, describeBroker, describeError, openConnection } from "./connection.ts";
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

/** How many times a refused (nacked) tail of a batch is published again. */
const NACK_RETRIES = 3;

/** The wait before the first republish of refused messages; doubles each time. */
const NACK_RETRY_DELAY_MS = 50;

/** amqplib's error for a nacked message (it has no class of its own). */
const NACKED_MESSAGE = "message nacked";

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
  // Message ids are unique per process, not just per publisher: a listener
  // remembers the count of a message it requeued by its id (delivery.ts).
  readonly #idPrefix = crypto.randomUUID().slice(0, 13);

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
   * @param headers Headers to publish every message with (Fedwork's
   *                delivery count, see delivery.ts), if any; kept when a
   *                delay queue dead-letters the message.
   * @throws {RangeError} When `delayMs` is longer than the longest delay.
   */
  async publish(
    encoded: readonly Buffer[],
    target: string,
    delayMs: number,
    priority?: number,
    headers?: Readonly<Record<string, unknown>>,
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
      // A nack means the broker refused the message without losing the
      // channel: a quorum queue does so while its leader is busy or not yet
      // elected (seen right after declaring one on a loaded machine).  The
      // refused messages are published again, a few times, when they are
      // the batch's tail: republishing a refused message that has confirmed
      // ones after it would put it behind them, out of order.
      let pending = encoded;
      for (let attempt = 0;; attempt++) {
        const refused = await publishConfirmed(
          channel,
          queue,
          pending,
          this.#options.durable,
          priority,
          headers,
          () => {
            const messageId = `${this.#idPrefix}.${this.#nextMessageId++}`;
            ids.push(messageId);
            return messageId;
          },
        );
        if (refused < 0) break;
        if (attempt >= NACK_RETRIES) {
          throw new Error(
            `the broker refused (nacked) ${pending.length - refused} message(s) ${
              attempt + 1
            } times`,
          );
        }
        logger.debug(
          "The AMQP broker refused {count} message(s) for queue {queue}; publishing them again.",
          {
            count: pending.length - refused,
            queue,
            attempt,
          },
        );
        await new Promise((resolve) => setTimeout(resolve, NACK_RETRY_DELAY_MS * 2 ** attempt));
        pending = pending.slice(refused);
      }
    } catch (error) {
      for (const id of ids) state.returned.delete(id);
      throw new AmqpConnectionError(
        `${capitalized(describeBroker(this.#options))} did not confirm the message(s) ` +
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
        this.#options,
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
        `Could not set up publishing to ${describeBroker(this.#options)}: ` +
          `${describeError(error)}.`,
        { cause: error },
      );
    }
  }
}

/**
 * Publishes `contents` in order to `queue` and waits for every confirm.
 * @returns The index of the first refused (nacked) message when every message
 *          from it on was refused, or -1 when all were confirmed.
 * @throws {Error} When the channel closed before every confirm, or when a
 *         refused message has confirmed ones after it (its order is lost).
 */
async function publishConfirmed(
  channel: ConfirmChannel,
  queue: string,
  contents: readonly Buffer[],
  durable: boolean,
  priority: number | undefined,
  headers: Readonly<Record<string, unknown>> | undefined,
  nextMessageId: () => string,
): Promise<number> {
  const confirms: Promise<boolean>[] = [];
  for (const content of contents) {
    let writable = true;
    const messageId = nextMessageId();
    confirms.push(
      new Promise<boolean>((resolve, reject) => {
        writable = channel.sendToQueue(queue, content, {
          persistent: durable,
          contentType: "application/json",
          messageId,
          ...(priority == null ? {} : { priority }),
          ...(headers == null ? {} : { headers }),
          // An unroutable message comes back (before its confirm) instead
          // of being confirmed and dropped.
          mandatory: true,
        }, (error) => {
          if (error == null) resolve(true);
          else if (error instanceof Error && error.message === NACKED_MESSAGE) resolve(false);
          else reject(error);
        });
      }),
    );
    // The socket's buffer is full: wait before writing more, so that a
    // large enqueueMany() does not hold every frame in memory.
    if (!writable) await waitForDrain(channel);
  }
  const confirmed = await Promise.all(confirms);
  const firstRefused = confirmed.indexOf(false);
  if (firstRefused < 0) return -1;
  if (confirmed.slice(firstRefused).some((ok) => ok)) {
    throw new Error(
      "the broker refused (nacked) a message but confirmed later ones of the same batch",
    );
  }
  return firstRefused;
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

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
