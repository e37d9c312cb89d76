import type { DurationInput } from "@fedwork/core";
import { positiveDurationOption, positiveIntegerOption } from "@fedwork/core/queue-kit";
import type { ChannelModel } from "amqplib";
import { delayStepFor } from "./topology.ts";

/**
 * Options for {@link AmqpMessageQueue}.
 * @since 0.1.0
 */
export interface AmqpMessageQueueOptions {
  /**
   * The broker URL.  The queue opens its own connections (one for
   * publishing, one per running `listen()` call, one for `getDepth()`) and
   * closes them on dispose.  Defaults to `amqp://guest:guest@127.0.0.1:5672`.
   */
  readonly url?: string;

  /**
   * An open `amqplib` connection (from `connect()`) to use instead of
   * opening connections from `url`, as `@fedify/amqp` takes it: the queue
   * opens its channels on it and closes those on dispose, but never closes
   * the connection, which stays yours.  Fedwork cannot reopen a connection
   * it did not open: once it drops, enqueues fail and listeners wait until
   * they are stopped, so prefer `url` where the broker may restart.  Not
   * together with `url`.
   * @since 0.4.0
   */
  readonly connection?: ChannelModel;

  /**
   * The name of the main queue; every other queue this class declares starts
   * with it (`<queue>.ordered.<i>`, `<queue>.delay.<ms>`,
   * `<queue>.ordered.<i>.delay.<ms>`).  Defaults to `"fedwork"`.
   */
  readonly queue?: string;

  /**
   * How many handlers one `listen()` call runs at once.  Must be an integer
   * from 1 to 65535.  Defaults to 1.
   */
  readonly concurrency?: number;

  /**
   * How many messages of the main queue the broker hands to one `listen()`
   * call before they are acknowledged (the consumer's prefetch count).  A
   * value above `concurrency` keeps the next messages on their way while
   * handlers run, trading some fairness between workers (prefetched
   * messages wait in this process; they go back to the broker when
   * listening stops) for throughput: with one handler at a time, prefetch
   * 16 drains a backlog about four times as fast as prefetch 1.  A value
   * below `concurrency` leaves handler slots unused.  Must be an integer
   * from 1 to 65535.  Defaults to `max(16, 2 * concurrency)` (at most
   * 65535), measured with `bench/amqp-prefetch.ts`.
   * (Before 0.2.0 the default was `concurrency`.)
   * @since 0.1.0
   */
  readonly prefetch?: number;

  /**
   * How many partition queues carry messages that have an ordering key.
   * Each key is hashed to one partition, and each partition is consumed by
   * a single active consumer with prefetch 1, so unrelated keys that share a
   * partition also run one after another.  More partitions mean more
   * parallelism between keys and more queues.  Must be the same for every
   * instance sharing the queue.  Defaults to 16.
   */
  readonly orderingPartitions?: number;

  /**
   * When `true`, a message whose handler throws is rejected with requeue, so
   * that the broker delivers it again (at once, with no backoff and no
   * attempt limit), and Fedwork's own retry policy is skipped.  Defaults to
   * `false`: Fedwork's retry policy decides, and a message whose handler
   * throws anyway is handed out again after `redeliveryDelay`.
   */
  readonly nativeRetrial?: boolean;

  /**
   * How long a message whose handler threw waits before it is handed out
   * again (with `nativeRetrial: false`).  A message without an ordering key
   * is published again into the delay queue for this delay (rounded up to
   * a delay step, see the manual) and then acknowledged; a keyed one is held unacknowledged for this long and its
   * handler run again, so that it keeps its place.  Must be positive and at
   * most about 49.7 days (2^32 - 1 ms).  Defaults to 30 seconds.
   * @since 0.2.0
   */
  readonly redeliveryDelay?: DurationInput;

  /**
   * The longest a listener keeps one delivery of a keyed message
   * unacknowledged while it redelivers the message in place (the handler
   * throwing, or calling `redeliver()`), counted from the delivery.  A
   * redelivery that would hold it longer gives the message back to the
   * broker instead (see the manual), so that the broker's
   * `consumer_timeout` never closes the listener's channel.  Keep it well
   * below `consumer_timeout` (RabbitMQ's default is 30 minutes): the last
   * handler run counts too.  Must be positive.  Defaults to 15 minutes.
   * @since 0.2.0
   */
  readonly keyedHoldLimit?: DurationInput;

  /**
   * Whether the queues survive a broker restart and messages are published
   * as persistent.  Must be the same for every instance sharing the queue.
   * Defaults to `true`.
   */
  readonly durable?: boolean;

  /**
   * The longest wait between two attempts to reconnect a listener after the
   * connection dropped; attempts start at 100 ms and double up to this.
   * Defaults to 10 seconds.
   */
  readonly maxReconnectDelay?: DurationInput;

  /**
   * Whether the main queue is a RabbitMQ priority queue (declared with
   * `x-max-priority: 10`), so that `enqueue()` takes a `priority` (-5 to 5,
   * published as the AMQP priority 0 to 10) and ready messages are handed
   * out highest priority first.  Messages with an ordering key go to the
   * partition queues, which stay first in, first out: a key's messages keep
   * their order, and priorities do not apply to them.  RabbitMQ cannot
   * change the arguments of an existing queue: turning this on (or off) for
   * a queue that already exists fails with an error that says so; drain
   * and delete the queue, or use a new queue name.  Must be the same for
   * every instance sharing the queue.  Defaults to `false` (the queue
   * refuses a priority other than 0).
   * @since 0.3.0
   */
  readonly priorities?: boolean;

  /**
   * The RabbitMQ queue type of every queue this class declares (the main
   * queue, the partition queues and the delay queues): `"classic"`, or
   * `"quorum"` for RabbitMQ's replicated, Raft-based queues, its
   * recommendation for durable data on a cluster of brokers.  Quorum
   * queues are always durable (`durable: false` is refused with them) and
   * have no priorities on RabbitMQ 3.x (`priorities: true` is refused with
   * them); delay queues dead-letter at least once.  See the manual's
   * "Scaling out" page for the trade-offs.  RabbitMQ cannot change the
   * type of an existing queue: the type must be the same for every
   * instance sharing the queue.  Defaults to `"classic"`.
   * @since 0.3.0
   */
  readonly queueType?: AmqpQueueType;
}

/**
 * The RabbitMQ queue types {@link AmqpMessageQueue} can declare (see
 * {@link AmqpMessageQueueOptions.queueType}).
 * @since 0.3.0
 */
export type AmqpQueueType = "classic" | "quorum";

const QUEUE_TYPES: readonly AmqpQueueType[] = ["classic", "quorum"];

/** Options after validation, with defaults filled in. */
export interface ResolvedAmqpOptions {
  readonly url: string;
  readonly connection: ChannelModel | undefined;
  readonly queue: string;
  readonly concurrency: number;
  readonly prefetch: number;
  readonly orderingPartitions: number;
  readonly nativeRetrial: boolean;
  readonly redeliveryDelayMs: number;
  readonly keyedHoldLimitMs: number;
  readonly durable: boolean;
  readonly maxReconnectDelayMs: number;
  readonly priorities: boolean;
  readonly queueType: AmqpQueueType;
}

/** The URL used when {@link AmqpMessageQueueOptions.url} is absent. */
export const DEFAULT_AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";

/**
 * Validates the options and fills in the defaults.
 * @throws {TypeError} When an option has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolveAmqpOptions(options: AmqpMessageQueueOptions): ResolvedAmqpOptions {
  const url = options.url ?? DEFAULT_AMQP_URL;
  if (typeof url !== "string" || !/^amqps?:\/\//.test(url)) {
    throw new TypeError(`url must be an amqp:// or amqps:// URL; got ${JSON.stringify(url)}.`);
  }
  const connection = options.connection ?? undefined;
  if (connection !== undefined) {
    if (!isChannelModel(connection)) {
      throw new TypeError(
        "The connection option of new AmqpMessageQueue() must be an open amqplib connection " +
          "(from amqplib's connect()).",
      );
    }
    if (options.url != null) {
      throw new TypeError(
        "new AmqpMessageQueue() takes either the url option or the connection option, not both.",
      );
    }
  }
  const queue = options.queue ?? "fedwork";
  // 255 bytes is AMQP's limit for a queue name; leave room for the suffixes.
  if (typeof queue !== "string" || queue.length < 1 || queue.length > 200) {
    throw new RangeError(`queue must be a non-empty string of at most 200 characters.`);
  }
  if (queue.startsWith("amq.")) {
    throw new RangeError(`queue must not start with "amq.", which the broker reserves.`);
  }
  // AMQP's channel prefetch is a 16-bit count.
  const concurrency = positiveIntegerOption(
    options.concurrency ?? undefined,
    "concurrency",
    1,
    65535,
  );
  const prefetch = positiveIntegerOption(
    options.prefetch ?? undefined,
    "prefetch",
    defaultPrefetch(concurrency),
    65535,
  );
  const orderingPartitions = positiveIntegerOption(
    options.orderingPartitions ?? undefined,
    "orderingPartitions",
    16,
    1024,
  );
  const nativeRetrial = options.nativeRetrial ?? false;
  if (typeof nativeRetrial !== "boolean") {
    throw new TypeError(`nativeRetrial must be a boolean.`);
  }
  // Zero would hand a failing message straight back out: a hot loop.
  const redeliveryDelayMs = positiveDurationOption(
    options.redeliveryDelay ?? undefined,
    "redeliveryDelay",
    30_000,
  );
  delayStepFor(redeliveryDelayMs, "redeliveryDelay");
  const keyedHoldLimitMs = positiveDurationOption(
    options.keyedHoldLimit ?? undefined,
    "keyedHoldLimit",
    15 * 60_000,
  );
  const durable = options.durable ?? true;
  if (typeof durable !== "boolean") throw new TypeError(`durable must be a boolean.`);
  const maxReconnectDelayMs = positiveDurationOption(
    options.maxReconnectDelay ?? undefined,
    "maxReconnectDelay",
    10_000,
  );
  const priorities = options.priorities ?? false;
  if (typeof priorities !== "boolean") throw new TypeError(`priorities must be a boolean.`);
  const queueType = queueTypeOption(options.queueType);
  if (queueType === "quorum" && !durable) {
    throw new RangeError(
      'queueType "quorum" needs durable: true: RabbitMQ\'s quorum queues are always durable.',
    );
  }
  if (queueType === "quorum" && priorities) {
    throw new RangeError(
      'priorities: true cannot be combined with queueType "quorum": RabbitMQ 3.x refuses ' +
        "x-max-priority on a quorum queue, and 4.x quorum queues know only two priority " +
        "levels without a strict order.  Use a classic queue for priorities.",
    );
  }
  return {
    url,
    connection,
    queue,
    concurrency,
    prefetch,
    orderingPartitions,
    nativeRetrial,
    redeliveryDelayMs,
    keyedHoldLimitMs,
    durable,
    maxReconnectDelayMs,
    priorities,
    queueType,
  };
}

/**
 * Checks the `queueType` option.
 * @throws {TypeError} When it is not one of {@link QUEUE_TYPES}, suggesting
 *         the one meant when the value looks like a typo of it.
 */
function queueTypeOption(value: unknown): AmqpQueueType {
  if (value == null) return "classic";
  if (QUEUE_TYPES.includes(value as AmqpQueueType)) return value as AmqpQueueType;
  const text = typeof value === "string" ? value.trim().toLowerCase() : "";
  const suggestion = QUEUE_TYPES.find((type) =>
    text.length >= 3 && (type.startsWith(text.slice(0, 3)) || text.includes(type))
  );
  throw new TypeError(
    `queueType must be "classic" or "quorum"; got ${JSON.stringify(value)}` +
      (suggestion == null ? "." : `; did you mean "${suggestion}"?`),
  );
}

/**
 * The prefetch used when the option is absent: enough messages on their way
 * that a handler finishing never waits for the broker's round trip, and
 * twice the handlers at higher concurrency.
 */
export function defaultPrefetch(concurrency: number): number {
  return Math.min(65535, Math.max(16, 2 * concurrency));
}

/**
 * The consumer prefetch of one `listen()` call: the queue's `prefetch`,
 * raised to twice the listener's batch size (a `handleMany` run's worth
 * to fill while the last one is acknowledged), within AMQP's 16-bit limit.
 * @param prefetch The resolved `prefetch` option.
 * @param batchSize The listener's checked `batchSize`, if any.
 * @returns The prefetch count to set on the channel.
 * @since 0.4.0
 */
export function listenerPrefetch(prefetch: number, batchSize: number | undefined): number {
  return batchSize === undefined ? prefetch : Math.min(65535, Math.max(prefetch, 2 * batchSize));
}

/**
 * Whether `value` is an `amqplib` connection (`ChannelModel`): duck-typed,
 * since it may come from another copy of amqplib.
 */
export function isChannelModel(value: unknown): value is ChannelModel {
  const candidate = value as Partial<
    Record<"createChannel" | "createConfirmChannel" | "on", unknown>
  >;
  return candidate != null && typeof candidate === "object" &&
    typeof candidate.createChannel === "function" &&
    typeof candidate.createConfirmChannel === "function" && typeof candidate.on === "function";
}
