// One listen() call: consumes the main queue and every partition queue,
// runs handlers under a concurrency limit, acknowledges after they settle,
// and reconnects with backoff whenever the connection drops.
import { getLogger } from "@logtape/logtape";
import type { Channel, ChannelModel, ConsumeMessage } from "amqplib";
import { closeQuietly, openConnection } from "./connection.ts";
import type { ResolvedAmqpOptions } from "./options.ts";
import { consumedQueueNames, declareConsumedQueues } from "./topology.ts";

const logger = getLogger(["fedwork", "amqp"]);

/** The first wait before reconnecting; doubled on every failed attempt. */
const INITIAL_RECONNECT_DELAY_MS = 100;

// deno-lint-ignore no-explicit-any
export type MessageHandler = (message: any) => Promise<void> | void;

/** Counts messages handed to this process and not yet settled. */
export interface InFlightCounter {
  inFlight: number;
}

/** A counting semaphore; waiters are served in arrival order. */
class Semaphore {
  #available: number;
  readonly #waiters: (() => void)[] = [];

  constructor(size: number) {
    this.#available = size;
  }

  acquire(): Promise<void> {
    if (this.#available > 0) {
      this.#available--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next != null) next();
    else this.#available++;
  }
}

/**
 * Listens until `signal` aborts, then waits for the running handlers.
 * Never rejects because of the broker: failures are logged and retried.
 */
export async function runListener(
  options: ResolvedAmqpOptions,
  handler: MessageHandler,
  signal: AbortSignal,
  counter: InFlightCounter,
): Promise<void> {
  const semaphore = new Semaphore(options.concurrency);
  const running = new Set<Promise<void>>();
  let attempt = 0;
  while (!signal.aborted) {
    let connected = false;
    try {
      await consumeUntilDropped(options, handler, signal, counter, semaphore, running, () => {
        connected = true;
        attempt = 0;
      });
    } catch (error) {
      logger.warn(
        "The AMQP listener for {queue} failed; reconnecting: {error}",
        { queue: options.queue, error },
      );
    }
    if (signal.aborted) break;
    if (running.size > 0) {
      // The broker requeued the running handlers' messages when the channel
      // closed; consuming again at once could run a second copy of a keyed
      // message next to the first in this very process.  Wait for them, but
      // not forever: a stuck handler must not stop the listener.
      logger.info("Waiting for {count} running handler(s) before reconnecting.", {
        count: running.size,
      });
      await Promise.race([Promise.all(running), sleep(options.maxReconnectDelayMs, signal)]);
    }
    if (!connected) attempt++;
    const delayMs = Math.min(
      INITIAL_RECONNECT_DELAY_MS * 2 ** Math.min(attempt, 20),
      options.maxReconnectDelayMs,
    );
    // Jitter keeps many workers from reconnecting in lockstep.
    await sleep(delayMs * (0.8 + Math.random() * 0.4), signal);
    if (!signal.aborted) {
      logger.info("Reconnecting the AMQP listener for {queue} (attempt {attempt}).", {
        queue: options.queue,
        attempt: attempt + 1,
      });
    }
  }
  await Promise.all(running);
}

/**
 * One connection's worth of consuming: resolves when the signal aborts (after
 * the handlers finished and were acknowledged) or when the connection or
 * channel is gone.
 */
async function consumeUntilDropped(
  options: ResolvedAmqpOptions,
  handler: MessageHandler,
  signal: AbortSignal,
  counter: InFlightCounter,
  semaphore: Semaphore,
  running: Set<Promise<void>>,
  onConnected: () => void,
): Promise<void> {
  let model: ChannelModel | undefined;
  try {
    let dropped!: () => void;
    const droppedPromise = new Promise<void>((resolve) => dropped = resolve);
    model = await openConnection(
      options.url,
      `fedwork ${options.queue} listener`,
      (error) => logger.warn("The AMQP listener connection failed: {error}", { error }),
    );
    model.on("close", dropped);
    const channel = await model.createChannel();
    let channelOpen = true;
    channel.on("error", (error) => {
      logger.warn("The AMQP listener channel failed: {error}", { error });
    });
    channel.on("close", () => {
      channelOpen = false;
      dropped();
    });
    await declareConsumedQueues(channel, options);

    const onMessage = (message: ConsumeMessage | null) => {
      if (message == null) {
        // The broker cancelled the consumer (e.g. the queue was deleted):
        // start over, which declares the queues again.
        logger.warn("The AMQP broker cancelled a consumer of {queue}.", { queue: options.queue });
        dropped();
        return;
      }
      const task = handleDelivery(
        options,
        handler,
        channel,
        () => channelOpen && !signal.aborted,
        () => channelOpen,
        message,
        counter,
        semaphore,
      );
      running.add(task);
      void task.finally(() => running.delete(task));
    };

    const consumerTags: string[] = [];
    const [main, ...partitions] = consumedQueueNames(options);
    // Per-consumer prefetch (global = false) applies to consumers started
    // after it is set: `prefetch` for the main queue, 1 for partitions.
    await channel.prefetch(options.prefetch);
    consumerTags.push((await channel.consume(main, onMessage, { noAck: false })).consumerTag);
    await channel.prefetch(1);
    for (const name of partitions) {
      consumerTags.push((await channel.consume(name, onMessage, { noAck: false })).consumerTag);
    }
    onConnected();
    logger.debug("The AMQP listener for {queue} is consuming.", { queue: options.queue });

    let onAbort!: () => void;
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    await Promise.race([droppedPromise, aborted]);
    // A listener that reconnects many times must not pile up abort handlers.
    signal.removeEventListener("abort", onAbort);
    if (signal.aborted && channelOpen) {
      // Stop deliveries, let the running handlers finish and acknowledge;
      // closing the channel then hands any prefetched, unstarted message
      // back to the broker.
      await Promise.all(consumerTags.map((tag) => channel.cancel(tag).catch(() => {})));
      await Promise.all(running);
    }
  } finally {
    await closeQuietly(model);
  }
}

/** Runs one delivery's handler and settles the delivery. */
async function handleDelivery(
  options: ResolvedAmqpOptions,
  handler: MessageHandler,
  channel: Channel,
  mayStart: () => boolean,
  maySettle: () => boolean,
  delivery: ConsumeMessage,
  counter: InFlightCounter,
  semaphore: Semaphore,
): Promise<void> {
  counter.inFlight++;
  await semaphore.acquire();
  try {
    // A message prefetched but not started when listening stops, or when the
    // channel is gone, is left unacknowledged: the broker requeues it.
    if (!mayStart()) return;
    let message: unknown;
    try {
      message = JSON.parse(delivery.content.toString("utf8"));
    } catch (error) {
      logger.error(
        "Dropping a message on {queue} that is not valid JSON: {error}",
        { queue: delivery.fields.routingKey, error },
      );
      settle(channel, maySettle, delivery, true);
      return;
    }
    let succeeded = false;
    try {
      await handler(message);
      succeeded = true;
    } catch (error) {
      logger.error("A message handler failed on {queue}: {error}", {
        queue: delivery.fields.routingKey,
        redelivered: delivery.fields.redelivered,
        error,
      });
    }
    settle(channel, maySettle, delivery, succeeded || !options.nativeRetrial);
  } finally {
    semaphore.release();
    counter.inFlight--;
  }
}

/** Acknowledges (or rejects with requeue) a delivery if its channel lives. */
function settle(
  channel: Channel,
  maySettle: () => boolean,
  delivery: ConsumeMessage,
  acknowledge: boolean,
): void {
  if (!maySettle()) {
    logger.warn(
      "Could not acknowledge a message on {queue}: its channel closed; the broker will " +
        "deliver it again.",
      { queue: delivery.fields.routingKey },
    );
    return;
  }
  try {
    if (acknowledge) channel.ack(delivery);
    else channel.nack(delivery, false, true);
  } catch (error) {
    logger.warn("Could not settle a message on {queue}: {error}", {
      queue: delivery.fields.routingKey,
      error,
    });
  }
}

/** Waits `ms`, or less if the signal aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
