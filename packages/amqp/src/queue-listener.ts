// One listen() call: consumes the main queue and every partition queue,
// hands each delivery to handleDelivery() (delivery.ts), which runs the
// handler under a concurrency limit and settles it, and reconnects with
// backoff whenever the connection drops.
import type { MessageQueueHandler } from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import type { ChannelModel, ConsumeMessage } from "amqplib";
import { AckBatcher } from "./acks.ts";
import { closeQuietly, openConnection } from "./connection.ts";
import {
  type DeliveryContext,
  type DeliverySource,
  handleDelivery,
  type InFlightCounter,
  Semaphore,
  sleep,
} from "./delivery.ts";
import type { ResolvedAmqpOptions } from "./options.ts";
import type { AmqpPublisher } from "./publisher.ts";
import { consumedQueueNames, declareConsumedQueues } from "./topology.ts";

const logger = getLogger(["fedwork", "amqp"]);

/** The first wait before reconnecting; doubled on every failed attempt. */
const INITIAL_RECONNECT_DELAY_MS = 100;

/**
 * Listens until `signal` aborts, then waits for the running handlers.
 * Never rejects because of the broker: failures are logged and retried.
 */
export async function runListener(
  options: ResolvedAmqpOptions,
  handler: MessageQueueHandler,
  publisher: AmqpPublisher,
  signal: AbortSignal,
  counter: InFlightCounter,
): Promise<void> {
  const semaphore = new Semaphore(options.concurrency);
  const running = new Set<Promise<void>>();
  let attempt = 0;
  while (!signal.aborted) {
    let connected = false;
    try {
      const shared = { options, handler, publisher, counter, semaphore };
      await consumeUntilDropped(shared, signal, running, () => {
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
  shared: Omit<
    DeliveryContext,
    "channel" | "acks" | "channelOpen" | "stopped" | "consumersCancelled"
  >,
  signal: AbortSignal,
  running: Set<Promise<void>>,
  onConnected: () => void,
): Promise<void> {
  const { options } = shared;
  let model: ChannelModel | undefined;
  // Wakes deliveries held for a redelivery when the channel is gone.
  const channelGone = new AbortController();
  let consumersCancelled!: () => void;
  const cancelled = new Promise<void>((resolve) => consumersCancelled = resolve);
  try {
    let resolveDropped!: () => void;
    const droppedPromise = new Promise<void>((resolve) => resolveDropped = resolve);
    const dropped = () => {
      channelGone.abort();
      resolveDropped();
    };
    model = await openConnection(
      options,
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

    const acks = new AckBatcher(channel, () => channelOpen);
    const context: DeliveryContext = {
      ...shared,
      channel,
      acks,
      channelOpen: () => channelOpen,
      stopped: AbortSignal.any([signal, channelGone.signal]),
      consumersCancelled: cancelled,
    };
    const onMessage = (source: DeliverySource) => (message: ConsumeMessage | null) => {
      if (message == null) {
        // The broker cancelled the consumer (e.g. the queue was deleted):
        // start over, which declares the queues again.
        logger.warn("The AMQP broker cancelled a consumer of {queue}.", { queue: options.queue });
        dropped();
        return;
      }
      acks.delivered(message);
      const task = handleDelivery(context, message, source);
      running.add(task);
      void task.finally(() => running.delete(task));
    };

    const consumerTags: string[] = [];
    const [main, ...partitions] = consumedQueueNames(options);
    // Per-consumer prefetch (global = false) applies to consumers started
    // after it is set: `prefetch` for the main queue, 1 for partitions.
    await channel.prefetch(options.prefetch);
    const onMain = onMessage({ queue: main, keyed: false });
    consumerTags.push((await channel.consume(main, onMain, { noAck: false })).consumerTag);
    await channel.prefetch(1);
    for (const name of partitions) {
      const onPartition = onMessage({ queue: name, keyed: true });
      consumerTags.push((await channel.consume(name, onPartition, { noAck: false })).consumerTag);
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
      // prefetched, unstarted messages without a key are published again
      // uncounted (see handleDelivery), and closing the channel hands the
      // keyed ones back to the broker.
      await Promise.all(consumerTags.map((tag) => channel.cancel(tag).catch(() => {})));
      consumersCancelled();
      // Deliveries that arrived before the cancellation took effect joined
      // `running` meanwhile: wait for those too.
      while (running.size > 0) await Promise.all(running);
      acks.flush();
      // A round trip after the last acknowledgements: the broker has
      // processed them before the connection closes (a quorum queue could
      // otherwise take back a message acknowledged just before).
      await channel.checkQueue(main).catch(() => {});
    }
  } finally {
    channelGone.abort();
    consumersCancelled();
    await closeQuietly(model);
  }
}
