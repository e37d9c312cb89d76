// One delivery's life in a listener: run the handler under the
// concurrency limit, then acknowledge the delivery, hand it back after a
// failure, or redeliver it in place.
//
// AMQP cannot change a message the broker holds, so "in place" is built:
// - a message without an ordering key is published again (new version,
//   through the delay queue for the delay, confirmed) and the original is
//   acknowledged; it has no place to keep;
// - a keyed message (its partition queue has a single active consumer and
//   prefetch 1) is held unacknowledged while the listener waits out the
//   delay and runs the handler again with the new version, so nothing
//   behind it in the partition can run meanwhile.  Holding is bounded by
//   `keyedHoldLimit`, under the broker's consumer_timeout.  If the process
//   dies or the channel closes meanwhile, the broker delivers the original
//   version again: at least once, but the new version is lost.
//
// Delivery counts (MessageRedelivery.deliveryCount): how many times the
// message was handed out since it was enqueued or last redelivered, this
// time included.  A message Fedwork publishes again without an outcome (a
// hand-back after a failure, a classic queue's recount, a message a
// stopping listener never started) carries the hand-outs counted so far in
// the x-fedwork-deliveries header; a redelivery (an outcome) publishes the
// new version without it, which resets the count.  On top of that:
// - a quorum queue counts the broker's own redeliveries (a consumer that
//   died, a requeue) in x-delivery-count, so the count is the header plus
//   x-delivery-count plus 1;
// - a classic queue only says `redelivered`: the broker handed the message
//   out before without an outcome, but not how often.  Such a delivery is
//   not run: it is published again (confirmed) with the header raised by
//   one, then acknowledged, so the count lives in the message itself; the
//   copy arrives as a fresh delivery.  The copy joins the back of its
//   queue: a keyed message redelivered after a crash loses its place in its
//   ordering key (quorum queues keep it).  A crash between the publish and
//   the acknowledgement delivers the message twice, never loses it.
//   A message this process itself rejected with requeue (nativeRetrial, a
//   keyed message at the keyedHoldLimit) and gets back is not copied: the
//   process remembers its count by message id, so it keeps its place.
import {
  durationToMilliseconds,
  type MessageQueueHandler,
  type MessageRedelivery,
  type MessageRedeliveryOptions,
} from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import type { Channel, ConsumeMessage } from "amqplib";
import type { AckBatcher } from "./acks.ts";
import { Buffer } from "node:buffer";
import { AmqpConnectionError } from "./errors.ts";
import type { ResolvedAmqpOptions } from "./options.ts";
import type { AmqpPublisher } from "./publisher.ts";
import { delayStepFor } from "./topology.ts";

const logger = getLogger(["fedwork", "amqp"]);

/** Counts messages handed to this process and not yet settled. */
export interface InFlightCounter {
  inFlight: number;
}

/** A counting semaphore; waiters are served in arrival order. */
export class Semaphore {
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
    // A slot taken back by take() beyond the size is paid back first.
    if (this.#available < 0) {
      this.#available++;
      return;
    }
    const next = this.#waiters.shift();
    if (next != null) next();
    else this.#available++;
  }

  /**
   * Takes a slot at once, beyond the size if none is free (the next
   * release() pays it back): what a handler that gave its slot up while
   * it waited (`yieldSlot()`) does when its run starts.
   */
  take(): void {
    this.#available--;
  }
}

/** What every delivery of one listener connection shares. */
export interface DeliveryContext {
  readonly options: ResolvedAmqpOptions;
  readonly handler: MessageQueueHandler;
  readonly publisher: AmqpPublisher;
  readonly channel: Channel;
  /** Acknowledges the channel's deliveries, in batches. */
  readonly acks: AckBatcher;
  /** Whether the channel the deliveries came on is still open. */
  readonly channelOpen: () => boolean;
  /** Aborts when listening stops or the channel closes. */
  readonly stopped: AbortSignal;
  /**
   * Resolves once the channel's consumers are cancelled (listening
   * stopped) or the channel is gone: no delivery comes after it.
   */
  readonly consumersCancelled: Promise<void>;
  readonly counter: InFlightCounter;
  readonly semaphore: Semaphore;
}

/**
 * The header that carries the hand-outs Fedwork counted before it
 * published a message again (see the comment at the top).
 */
export const DELIVERIES_HEADER = "x-fedwork-deliveries";

/** Counts read from headers are capped here: anything higher is poison anyway. */
const MAX_HEADER_COUNT = 2 ** 31;

/** A count from a header a stranger may have written: a non-negative integer, else 0. */
function headerCount(value: unknown): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0
    ? Math.min(value, MAX_HEADER_COUNT)
    : 0;
}

/**
 * The hand-outs of a delivery's message before this one: what Fedwork
 * carried in {@link DELIVERIES_HEADER}, plus, on a quorum queue, the
 * broker's `x-delivery-count`.
 */
function earlierDeliveries(options: ResolvedAmqpOptions, delivery: ConsumeMessage): number {
  const headers = delivery.properties.headers ?? {};
  const carried = headerCount(headers[DELIVERIES_HEADER]);
  return options.queueType === "quorum"
    ? carried + headerCount(headers["x-delivery-count"])
    : carried;
}

/**
 * The hand-outs of messages this process rejected with requeue on a
 * classic queue, by message id (see the top), oldest first; bounded.
 */
const requeuedHere = new Map<string, number>();
const MAX_REQUEUED_REMEMBERED = 10_000;

/** The message id Fedwork's publisher gave a delivery, if any. */
function messageIdOf(delivery: ConsumeMessage): string | undefined {
  const id: unknown = delivery.properties.messageId;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** Whether a classic queue marked the delivery as handed out before. */
function classicRedelivered(options: ResolvedAmqpOptions, delivery: ConsumeMessage): boolean {
  return options.queueType !== "quorum" && delivery.fields.redelivered;
}

/** The queue a delivery was consumed from. */
export interface DeliverySource {
  readonly queue: string;
  /** Whether it is a partition queue, holding messages with ordering keys. */
  readonly keyed: boolean;
}

/** What a handler asked for through its {@link MessageRedelivery}. */
type RedeliveryOutcome =
  /** The new version was published and the delivery acknowledged. */
  | { readonly kind: "published" }
  /** Hold the delivery, then run the handler again with `message`. */
  | { readonly kind: "hold"; readonly message: unknown; readonly delayMs: number };

/** The {@link MessageRedelivery} handed to one handler run. */
class DeliveryRedelivery implements MessageRedelivery {
  readonly deliveryCount: number;
  readonly #context: DeliveryContext;
  readonly #delivery: ConsumeMessage;
  readonly #source: DeliverySource;
  readonly #receivedAt: number;
  #storing: Promise<void> | undefined;
  #outcome: RedeliveryOutcome | undefined;
  /** Whether the handler gave its slot up (yieldSlot()) and has not taken it back. */
  #yielded = false;
  #handlerSettled = false;

  constructor(
    context: DeliveryContext,
    delivery: ConsumeMessage,
    source: DeliverySource,
    receivedAt: number,
    deliveryCount: number,
  ) {
    this.deliveryCount = deliveryCount;
    this.#context = context;
    this.#delivery = delivery;
    this.#source = source;
    this.#receivedAt = receivedAt;
  }

  readonly yieldSlot = (): () => void => {
    // The broker's prefetch bounds how many deliveries a listener holds, so
    // it bounds the slots given up too.
    if (this.#yielded || this.#handlerSettled) return () => {};
    this.#yielded = true;
    this.#context.semaphore.release();
    return () => this.takeSlotBack();
  };

  /**
   * Takes back the slot the handler gave up, if it did; called when its
   * run starts and, at the latest, when the handler settles.
   */
  takeSlotBack(): void {
    if (!this.#yielded) return;
    this.#yielded = false;
    this.#context.semaphore.take();
  }

  /** Called once the handler has settled: no slot is given up after. */
  settled(): void {
    this.takeSlotBack();
    this.#handlerSettled = true;
  }

  redeliver(message: unknown, options: MessageRedeliveryOptions): Promise<void> {
    try {
      if (this.#storing != null) {
        throw new TypeError(
          `redeliver() was already called for this delivery of a message of queue ` +
            `${JSON.stringify(this.#source.queue)}; call it at most once per delivery.`,
        );
      }
      const delayMs = durationToMilliseconds(options?.delay, "delay");
      if (delayMs > 0) delayStepFor(delayMs);
      const json = JSON.stringify(message);
      if (json === undefined) {
        throw new TypeError(
          `The message to redeliver is not JSON-serializable (got ${typeof message}).`,
        );
      }
      if (!this.#context.channelOpen()) {
        throw new AmqpConnectionError(
          `Cannot redeliver a message of queue ${JSON.stringify(this.#source.queue)}: the ` +
            "listener's channel closed, so the broker will deliver the message again as it was.",
        );
      }
      const storing = this.#store(json, delayMs).then((outcome) => {
        this.#outcome = outcome;
      });
      this.#storing = storing;
      return storing;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** What was stored, once a `redeliver()` call settled. */
  async outcome(): Promise<RedeliveryOutcome | undefined> {
    // A handler that did not await its redeliver() call still gets it.
    await this.#storing?.catch(() => {});
    return this.#outcome;
  }

  async #store(json: string, delayMs: number): Promise<RedeliveryOutcome> {
    const context = this.#context;
    if (this.#source.keyed) {
      if (withinHoldLimit(context.options, this.#receivedAt, delayMs)) {
        return { kind: "hold", message: JSON.parse(json), delayMs };
      }
      logger.warn(
        "Redelivering a message of {queue} in {delayMs} ms would hold it past the " +
          "keyedHoldLimit; it is published again into the delay queue and loses its place " +
          "in its ordering key.",
        { queue: this.#source.queue, delayMs },
      );
    }
    await context.publisher.publish(
      [Buffer.from(json, "utf8")],
      this.#source.queue,
      delayMs,
      this.#delivery.properties.priority,
    );
    settle(context, this.#delivery, "ack");
    return { kind: "published" };
  }
}

function withinHoldLimit(
  options: ResolvedAmqpOptions,
  receivedAt: number,
  delayMs: number,
): boolean {
  return Date.now() - receivedAt + delayMs <= options.keyedHoldLimitMs;
}

/**
 * Runs one delivery's handler (again, for a keyed message redelivered in
 * place) and settles the delivery.
 */
export async function handleDelivery(
  context: DeliveryContext,
  delivery: ConsumeMessage,
  source: DeliverySource,
): Promise<void> {
  const { options, counter, semaphore, stopped } = context;
  // The broker's consumer_timeout runs from the delivery, not from the
  // start of the handler.
  const receivedAt = Date.now();
  counter.inFlight++;
  await semaphore.acquire();
  let holdingSlot = true;
  /** Waits without taking a concurrency slot; false when stopped meanwhile. */
  const hold = async (ms: number): Promise<boolean> => {
    semaphore.release();
    holdingSlot = false;
    await sleep(ms, stopped);
    if (stopped.aborted) return false;
    await semaphore.acquire();
    holdingSlot = true;
    return !stopped.aborted;
  };
  try {
    if (stopped.aborted) {
      // A message prefetched but not started when the channel is gone is
      // back with the broker already.  When listening stops, one without an
      // ordering key is published again with its count unchanged (it was
      // not handed to the handler) and acknowledged; a keyed one is left
      // unacknowledged so that it keeps its place, and the broker requeues
      // it when the channel closes (which counts as a hand-out).
      // Published again only once nothing more is delivered here: a copy
      // would otherwise come straight back to this stopping listener.
      if (!source.keyed && context.channelOpen()) await context.consumersCancelled;
      if (!source.keyed && context.channelOpen()) {
        const unknownEarlier = classicRedelivered(options, delivery) ? 1 : 0;
        await republish(
          context,
          delivery,
          source,
          earlierDeliveries(options, delivery) + unknownEarlier,
        );
      }
      return;
    }
    let deliveryCount = earlierDeliveries(options, delivery) + 1;
    if (classicRedelivered(options, delivery)) {
      const id = messageIdOf(delivery);
      const remembered = id == null ? undefined : requeuedHere.get(id);
      if (remembered === undefined) {
        // A classic queue cannot say how often it handed this message out:
        // count it in a copy instead of running it (see the top).
        await recount(context, delivery, source, hold);
        return;
      }
      requeuedHere.delete(id!);
      deliveryCount = remembered + 1;
    }
    let message: unknown;
    try {
      message = JSON.parse(delivery.content.toString("utf8"));
    } catch (error) {
      logger.error(
        "Dropping a message on {queue} that is not valid JSON: {error}",
        { queue: source.queue, error },
      );
      settle(context, delivery, "ack");
      return;
    }
    /** Whether `message` is no longer what the broker holds. */
    let changed = false;
    for (;;) {
      const redelivery = new DeliveryRedelivery(
        context,
        delivery,
        source,
        receivedAt,
        deliveryCount,
      );
      let failure: { error: unknown } | undefined;
      try {
        await context.handler(message, redelivery);
      } catch (error) {
        failure = { error };
      }
      redelivery.settled();
      const requested = await redelivery.outcome();
      let next: { message: unknown; delayMs: number };
      if (requested != null) {
        if (failure != null) {
          logger.error(
            "A message handler failed on {queue} after redelivering its message; the new " +
              "version stays scheduled: {error}",
            { queue: source.queue, error: failure.error },
          );
        }
        if (requested.kind === "published") return;
        next = requested;
        changed = true;
        // An outcome: the held version's next run counts from 1.
        deliveryCount = 1;
      } else if (failure == null) {
        settle(context, delivery, "ack");
        return;
      } else if (options.nativeRetrial) {
        logger.error("A message handler failed on {queue}; the broker retries it: {error}", {
          queue: source.queue,
          redelivered: delivery.fields.redelivered,
          error: failure.error,
        });
        settle(context, delivery, "requeue", deliveryCount);
        return;
      } else if (stopped.aborted) {
        // Stopping: the handler most likely ended because its worker shut
        // down under it, so the message goes back at once, this hand-out
        // not counted, as one prefetched but never started does (above);
        // once nothing more is delivered here, so that it goes elsewhere.
        logger.info(
          "A message handler on {queue} ended while the listener stopped; the message goes " +
            "back to the broker for another worker.",
          { queue: source.queue },
        );
        if (context.channelOpen()) await context.consumersCancelled;
        if (!context.channelOpen()) return;
        if (source.keyed || !await republish(context, delivery, source, deliveryCount - 1)) {
          settle(context, delivery, "requeue", deliveryCount - 1);
        }
        return;
      } else {
        logger.error(
          "A message handler failed on {queue}; the message will be handed out again in " +
            "{redeliveryDelayMs} ms: {error}",
          {
            queue: source.queue,
            redeliveryDelayMs: options.redeliveryDelayMs,
            redelivered: delivery.fields.redelivered,
            error: failure.error,
          },
        );
        if (!source.keyed) {
          await handBack(context, delivery, source, hold, deliveryCount);
          return;
        }
        next = { message, delayMs: options.redeliveryDelayMs };
        // No outcome: the held message's next run is one more hand-out.
        deliveryCount++;
      }
      // A keyed message: hold the delivery to keep its place, then run the
      // handler again.
      if (!withinHoldLimit(options, receivedAt, next.delayMs)) {
        await giveBackHeld(
          context,
          delivery,
          source,
          changed ? next : undefined,
          deliveryCount - 1,
        );
        return;
      }
      if (!await hold(next.delayMs)) {
        // Stopping (or the channel is gone): the broker gets the original
        // version back, as if this process had died.
        if (context.channelOpen()) settle(context, delivery, "requeue", deliveryCount - 1);
        return;
      }
      message = next.message;
    }
  } finally {
    if (holdingSlot) semaphore.release();
    counter.inFlight--;
  }
}

/**
 * Hands a failed message without an ordering key back: published again
 * into the delay queue for `redeliveryDelay`, then acknowledged.  If the
 * publish fails, the delivery is held for that long instead and then
 * rejected with requeue, so the message is never lost.
 */
async function handBack(
  context: DeliveryContext,
  delivery: ConsumeMessage,
  source: DeliverySource,
  hold: (ms: number) => Promise<boolean>,
  deliveryCount: number,
): Promise<void> {
  // With the channel gone the broker already requeued it; a copy would be
  // a duplicate.
  if (!context.channelOpen()) return;
  const { redeliveryDelayMs } = context.options;
  try {
    await context.publisher.publish(
      [delivery.content],
      source.queue,
      redeliveryDelayMs,
      delivery.properties.priority,
      // A failure is no outcome: the copy keeps counting.
      { [DELIVERIES_HEADER]: deliveryCount },
    );
  } catch (error) {
    logger.warn(
      "Could not publish a failed message of {queue} again; holding it for " +
        "{redeliveryDelayMs} ms before the broker gets it back: {error}",
      { queue: source.queue, redeliveryDelayMs, error },
    );
    await hold(redeliveryDelayMs);
    if (context.channelOpen()) settle(context, delivery, "requeue", deliveryCount);
    return;
  }
  settle(context, delivery, "ack");
}

/**
 * Counts a delivery a classic queue marked `redelivered` (see the top):
 * publishes it again at once with {@link DELIVERIES_HEADER} raised by the
 * hand-out that ended without an outcome, then acknowledges it, without
 * running it.  If the publish fails, the delivery is held for
 * `redeliveryDelay` and then rejected with requeue (it comes back marked
 * again), so a broken publisher is not retried in a tight loop and the
 * message is never lost.
 */
async function recount(
  context: DeliveryContext,
  delivery: ConsumeMessage,
  source: DeliverySource,
  hold: (ms: number) => Promise<boolean>,
): Promise<void> {
  const counted = earlierDeliveries(context.options, delivery) + 1;
  if (await republish(context, delivery, source, counted)) {
    // The acknowledgement must reach the broker before this process runs
    // anything else: a handler that kills it meanwhile would leave the
    // original to be redelivered, uncounted, beside its copy.  A round trip
    // on the channel after the ack proves it was processed.
    context.acks.flush();
    await context.channel.checkQueue(source.queue).catch(() => {});
    return;
  }
  const { redeliveryDelayMs } = context.options;
  logger.warn(
    "Could not count a redelivered message of {queue}; holding it for {redeliveryDelayMs} ms " +
      "before the broker gets it back.",
    { queue: source.queue, redeliveryDelayMs },
  );
  await hold(redeliveryDelayMs);
  if (context.channelOpen()) settle(context, delivery, "requeue", counted);
}

/**
 * Publishes a delivery's message again, at once and unchanged but for
 * {@link DELIVERIES_HEADER} = `deliveries`, and acknowledges the delivery.
 * @returns Whether the copy was confirmed (and the delivery acknowledged);
 *          `false` leaves the delivery unsettled.
 */
async function republish(
  context: DeliveryContext,
  delivery: ConsumeMessage,
  source: DeliverySource,
  deliveries: number,
): Promise<boolean> {
  try {
    await context.publisher.publish(
      [delivery.content],
      source.queue,
      0,
      delivery.properties.priority,
      deliveries > 0 ? { [DELIVERIES_HEADER]: deliveries } : undefined,
    );
  } catch (error) {
    logger.warn("Could not publish a message of {queue} again: {error}", {
      queue: source.queue,
      error,
    });
    return false;
  }
  settle(context, delivery, "ack");
  return true;
}

/**
 * Gives a held keyed delivery back when holding it longer would pass the
 * hold limit: the original version is rejected with requeue (it keeps its
 * place); a newer version is published into the partition's delay queue
 * and the original acknowledged, so that the retry's progress survives
 * (it loses its place in its ordering key).  `handedOut` is how many
 * hand-outs the original version has had.
 */
async function giveBackHeld(
  context: DeliveryContext,
  delivery: ConsumeMessage,
  source: DeliverySource,
  newer: { message: unknown; delayMs: number } | undefined,
  handedOut: number,
): Promise<void> {
  if (!context.channelOpen()) return;
  if (newer == null) {
    logger.warn(
      "A failing message of {queue} reached the keyedHoldLimit; the broker gets it back now.",
      { queue: source.queue },
    );
    settle(context, delivery, "requeue", handedOut);
    return;
  }
  logger.warn(
    "Holding a redelivered message of {queue} for {delayMs} ms more would pass the " +
      "keyedHoldLimit; it is published again into the delay queue and loses its place in " +
      "its ordering key.",
    { queue: source.queue, delayMs: newer.delayMs },
  );
  try {
    const content = Buffer.from(JSON.stringify(newer.message), "utf8");
    await context.publisher.publish(
      [content],
      source.queue,
      newer.delayMs,
      delivery.properties.priority,
    );
  } catch (error) {
    logger.error(
      "Could not publish a redelivered message of {queue}; the broker gets its original " +
        "version back: {error}",
      { queue: source.queue, error },
    );
    if (context.channelOpen()) settle(context, delivery, "requeue", handedOut);
    return;
  }
  settle(context, delivery, "ack");
}

/**
 * Acknowledges (or rejects with requeue) a delivery if its channel lives.
 * A requeue on a classic queue remembers `handedOut`, the hand-outs so far,
 * for when this process gets the message back (see the top).
 */
function settle(
  context: DeliveryContext,
  delivery: ConsumeMessage,
  how: "ack" | "requeue",
  handedOut?: number,
) {
  if (!context.channelOpen()) {
    logger.warn(
      "Could not settle a message on {queue}: its channel closed; the broker will " +
        "deliver it again.",
      { queue: delivery.fields.routingKey },
    );
    return;
  }
  try {
    if (how === "ack") {
      context.acks.ack(delivery);
      return;
    }
    const id = messageIdOf(delivery);
    if (handedOut != null && id != null && context.options.queueType !== "quorum") {
      requeuedHere.delete(id);
      requeuedHere.set(id, handedOut);
      if (requeuedHere.size > MAX_REQUEUED_REMEMBERED) {
        requeuedHere.delete(requeuedHere.keys().next().value!);
      }
    }
    context.acks.requeue(delivery);
  } catch (error) {
    logger.warn("Could not settle a message on {queue}: {error}", {
      queue: delivery.fields.routingKey,
      error,
    });
  }
}

/** Waits `ms`, or less if the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
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
