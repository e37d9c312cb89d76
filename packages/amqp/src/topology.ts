// Queue names and declarations.  Every queue an AmqpMessageQueue uses is
// derived from the main queue's name, so that the set of queues is known
// from the name alone (except for the delay queues, whose names carry the
// delay and which expire on their own when unused).
import type { Channel, Options } from "amqplib";
import type { ResolvedAmqpOptions } from "./options.ts";

/**
 * How long an unused delay queue outlives the longest time a message can
 * stay in it, before the broker deletes it (`x-expires`).
 */
export const DELAY_QUEUE_GRACE_MS = 60_000;

/** The name of the partition queue with index `index`. */
export function partitionQueueName(queue: string, index: number): string {
  return `${queue}.ordered.${index}`;
}

/** The names of the main queue and every partition queue. */
export function consumedQueueNames(options: ResolvedAmqpOptions): string[] {
  const names = [options.queue];
  for (let i = 0; i < options.orderingPartitions; i++) {
    names.push(partitionQueueName(options.queue, i));
  }
  return names;
}

/**
 * The queue a message goes to once it is ready: the main queue, or the
 * partition its ordering key hashes to.
 */
export function targetQueueName(options: ResolvedAmqpOptions, orderingKey?: string): string {
  if (orderingKey == null) return options.queue;
  return partitionQueueName(options.queue, hashKey(orderingKey) % options.orderingPartitions);
}

/**
 * The longest delay a delay queue can give: RabbitMQ's largest message TTL,
 * 2^32 - 1 ms (about 49.7 days).
 */
export const MAX_DELAY_MS = 2 ** 32 - 1;

/**
 * The delays the delay queues have, in milliseconds, ascending: 128 ms and
 * then, per doubling, the power of two and one and a half times it
 * (128, 192, 256, 384, 512, 768, 1024, 1536, ... 2^31, 3 * 2^30), then
 * {@link MAX_DELAY_MS}.  51 steps, so a target queue has at most 51 delay
 * queues whatever delays are asked for, and a delay rounded up to a step
 * waits at most half as long again as asked (for delays above 128 ms).
 */
export const DELAY_STEPS_MS: readonly number[] = (() => {
  const steps: number[] = [];
  for (let power = 2 ** 7; power <= 2 ** 31; power *= 2) steps.push(power, power * 1.5);
  steps.push(MAX_DELAY_MS);
  return steps;
})();

/**
 * The delay a message asked to wait `delayMs` actually gets: the smallest
 * of {@link DELAY_STEPS_MS} not shorter than it, so that a message is never
 * delivered earlier than asked and the number of delay queues is bounded.
 * @throws {RangeError} When `delayMs` is longer than {@link MAX_DELAY_MS};
 *         the message names `optionName`.
 */
export function delayStepFor(delayMs: number, optionName = "delay"): number {
  if (!(delayMs <= MAX_DELAY_MS)) {
    throw new RangeError(
      `${optionName} must be at most ${MAX_DELAY_MS} ms (about 49.7 days, RabbitMQ's longest ` +
        `message TTL) on an AMQP queue; got ${delayMs} ms.`,
    );
  }
  // Binary search: the first step >= delayMs.
  let low = 0;
  let high = DELAY_STEPS_MS.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (DELAY_STEPS_MS[middle] >= delayMs) high = middle;
    else low = middle + 1;
  }
  return DELAY_STEPS_MS[low];
}

/**
 * The delay queue that dead-letters into `target` after `stepMs`, one of
 * {@link DELAY_STEPS_MS}.
 */
export function delayQueueName(target: string, stepMs: number): string {
  return `${target}.delay.${stepMs}`;
}

/**
 * The `x-max-priority` of the main queue with `priorities: true`: AMQP
 * priorities 0 to 10 carry Fedwork's -5 to 5.
 */
export const MAX_AMQP_PRIORITY = 10;

/**
 * The AMQP priority a message is published with: Fedwork's priority
 * shifted into 0 to 10, or none when the queue has no priorities.
 */
export function amqpPriority(options: ResolvedAmqpOptions, priority: number): number | undefined {
  return options.priorities ? priority + MAX_AMQP_PRIORITY / 2 : undefined;
}

/** The arguments of the main queue or of a partition queue. */
export function consumedQueueArguments(
  options: ResolvedAmqpOptions,
  name: string,
): Options.AssertQueue {
  const type = queueTypeArguments(options);
  if (name === options.queue) {
    return options.priorities
      ? { durable: options.durable, arguments: { "x-max-priority": MAX_AMQP_PRIORITY } }
      : type == null
      ? { durable: options.durable }
      : { durable: options.durable, arguments: type };
  }
  // A single active consumer with prefetch 1 is what keeps one partition's
  // messages from running at the same time, even across processes.
  return {
    durable: options.durable,
    arguments: { ...type, "x-single-active-consumer": true },
  };
}

/**
 * The arguments that choose the queue type: none for classic queues (so
 * that queues declared before the option existed stay equivalent), and
 * `x-queue-type: quorum` for quorum queues.
 */
function queueTypeArguments(options: ResolvedAmqpOptions): Record<string, unknown> | undefined {
  return options.queueType === "quorum" ? { "x-queue-type": "quorum" } : undefined;
}

/** The arguments of a delay queue. */
export function delayQueueArguments(
  options: ResolvedAmqpOptions,
  target: string,
  delayMs: number,
): Options.AssertQueue {
  return {
    durable: options.durable,
    arguments: {
      ...queueTypeArguments(options),
      // A quorum queue's dead-lettering is at most once by default: a
      // message expiring while its target cannot take it would be dropped.
      // At least once keeps it until the target confirmed it, which needs
      // x-overflow reject-publish.
      ...(options.queueType === "quorum"
        ? { "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish" }
        : {}),
      "x-message-ttl": delayMs,
      // The default exchange ("") routes by queue name, so expired messages
      // land in the target queue without any exchange of our own.
      "x-dead-letter-exchange": "",
      "x-dead-letter-routing-key": target,
      "x-expires": delayMs + DELAY_QUEUE_GRACE_MS,
    },
  };
}

/**
 * Declares the main queue and every partition queue.
 * @throws {Error} When a queue exists with other arguments (the broker
 *         refuses to redeclare it; its channel is closed), saying how to
 *         fix it.
 */
export async function declareConsumedQueues(
  channel: Channel,
  options: ResolvedAmqpOptions,
): Promise<void> {
  try {
    await Promise.all(
      consumedQueueNames(options).map((name) =>
        channel.assertQueue(name, consumedQueueArguments(options, name))
      ),
    );
  } catch (error) {
    throw explainInequivalentQueue(error, options);
  }
}

/**
 * Turns the broker's refusal to redeclare a queue with other arguments
 * (406 PRECONDITION_FAILED, "inequivalent arg") into an error that says
 * what to do; returns any other error as it is.
 */
export function explainInequivalentQueue(error: unknown, options: ResolvedAmqpOptions): unknown {
  const text = String((error as { message?: unknown })?.message ?? error);
  if (!/PRECONDITION_FAILED|inequivalent arg/i.test(text)) return error;
  const priority = /x-max-priority/.test(text);
  if (/x-queue-type/.test(text)) {
    return new Error(
      `The AMQP queue ${JSON.stringify(options.queue)} (or one of its partition or delay ` +
        `queues) already exists with another queue type than this AmqpMessageQueue's ` +
        `queueType, ${JSON.stringify(options.queueType)} (${text}).  RabbitMQ cannot change ` +
        "the type of an existing queue: set queueType to match the queue, or drain it, " +
        "delete it (for example with rabbitmqctl delete_queue) and let it be declared " +
        "again, or use a new queue name.",
      { cause: error },
    );
  }
  return new Error(
    `The AMQP queue ${JSON.stringify(options.queue)} already exists with other arguments ` +
      `than this AmqpMessageQueue declares (${text}).  RabbitMQ cannot change the ` +
      "arguments of an existing queue" +
      (priority
        ? `; this one was declared ${
          options.priorities ? "without" : "with"
        } x-max-priority, and the priorities option is ${options.priorities}.  Set ` +
          "priorities to match the queue, or drain it, delete it (for example with " +
          "rabbitmqctl delete_queue) and let it be declared again, or use a new queue name."
        : ".  Use the same options as the instances that declared it, or delete the queue."),
    { cause: error },
  );
}

/** FNV-1a over the UTF-8 bytes: stable across processes and runtimes. */
export function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(key)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The delay queues declared by this process, per main queue, so that
 * `getDepth()` can count delayed messages and cleanup can delete them.
 * Delay queues declared by other processes are not known here; they expire
 * on their own.
 */
const knownDelayQueues = new Map<string, Set<string>>();

/** Remembers a delay queue declared for the main queue `queue`. */
export function rememberDelayQueue(queue: string, name: string): void {
  let names = knownDelayQueues.get(queue);
  if (names == null) knownDelayQueues.set(queue, names = new Set());
  names.add(name);
}

/** Forgets a delay queue that no longer exists. */
export function forgetDelayQueue(queue: string, name: string): void {
  knownDelayQueues.get(queue)?.delete(name);
}

/** The delay queues this process declared for the main queue `queue`. */
export function knownDelayQueueNames(queue: string): string[] {
  return [...knownDelayQueues.get(queue) ?? []];
}
