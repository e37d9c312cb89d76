// The two ways to call `new AmqpMessageQueue()`: Fedwork's options object
// (with `url` or `connection` in it), and @fedify/amqp's form, an open
// amqplib connection first and Fedify's options after it.
import type { ChannelModel } from "amqplib";
import type { AmqpMessageQueueOptions } from "./options.ts";
import { isChannelModel } from "./options.ts";

const WHERE = "new AmqpMessageQueue()";

/**
 * The options of `new AmqpMessageQueue(connection, options?)`: Fedwork's,
 * without `url` and `connection`, plus the part of `@fedify/amqp`'s
 * `ordering` option that has a Fedwork equivalent.
 * @since 0.4.0
 */
export interface AmqpMessageQueueConnectionOptions
  extends Omit<AmqpMessageQueueOptions, "url" | "connection"> {
  /**
   * `@fedify/amqp`'s ordering options.  `partitions` becomes
   * {@link AmqpMessageQueueOptions.orderingPartitions} (not both); Fedify's
   * `exchange` and `queuePrefix` are refused, since Fedwork names its
   * partition queues after the queue (`<queue>.ordered.<i>`) and needs no
   * exchange.
   */
  readonly ordering?: { readonly partitions?: number };
}

function describeArgument(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return typeof value;
}

/** Turns Fedify's `ordering` option into `orderingPartitions`. */
function withoutOrdering(options: Record<string, unknown>): Record<string, unknown> {
  if (options.ordering === undefined) return options;
  const { ordering, ...rest } = options;
  if (ordering === null || typeof ordering !== "object" || Array.isArray(ordering)) {
    throw new TypeError(`The ordering option of ${WHERE} must be an object.`);
  }
  for (const name of Object.keys(ordering)) {
    if (name === "partitions") continue;
    throw new TypeError(
      `${WHERE} takes no ordering.${name} option: Fedwork names the partition queues of ` +
        "ordering keys after the queue (<queue>.ordered.<i>) and routes to them without an " +
        "exchange.  Remove it; ordering.partitions (orderingPartitions) is the one that " +
        "carries over.",
    );
  }
  const { partitions } = ordering as { partitions?: unknown };
  if (partitions === undefined) return rest;
  if (rest.orderingPartitions !== undefined) {
    throw new TypeError(
      `${WHERE} got both ordering.partitions and orderingPartitions; give one of them.`,
    );
  }
  return { ...rest, orderingPartitions: partitions };
}

/**
 * Turns the constructor's arguments into its options object.  A
 * connection first is Fedify's form: it becomes the `connection` option,
 * and the options after it are Fedwork's others (Fedify's `queue`,
 * `durable` and `nativeRetrial` mean the same; its `ordering.partitions`
 * becomes `orderingPartitions`).  Anything else first must be Fedwork's
 * options object, alone, or nothing.
 * @param first The first argument, `undefined` when absent.
 * @param second The second argument, `undefined` when absent.
 * @returns The options.
 * @throws {TypeError} When the first argument is none of these, or the
 *         connection comes twice.
 */
export function resolveConstructorArguments(
  first: unknown,
  second: unknown,
): AmqpMessageQueueOptions {
  if (isChannelModel(first)) {
    if (second === undefined) return { connection: first as ChannelModel };
    if (second === null || typeof second !== "object" || Array.isArray(second)) {
      throw new TypeError(
        `The second argument of ${WHERE} must be an options object; got ${
          describeArgument(second)
        }.`,
      );
    }
    const given = second as Record<string, unknown>;
    for (const name of ["url", "connection"]) {
      if (given[name] !== undefined) {
        throw new TypeError(
          `${WHERE} got a connection as its first argument; the ${name} option cannot come too.`,
        );
      }
    }
    return { ...withoutOrdering(given), connection: first as ChannelModel };
  }
  if (first === undefined && second === undefined) return {};
  if (first != null && typeof first === "object" && !Array.isArray(first)) {
    if (second !== undefined) {
      throw new TypeError(
        `${WHERE} takes a second argument only after an amqplib connection ` +
          "(new AmqpMessageQueue(connection, options)); with an options object, put every " +
          "option in it.",
      );
    }
    return first as AmqpMessageQueueOptions;
  }
  throw new TypeError(
    `${WHERE} takes an open amqplib connection (new AmqpMessageQueue(await connect(url)), as ` +
      `in Fedify) or an options object ({ url }); got ${describeArgument(first)}.`,
  );
}

/**
 * Advice for the options of `@fedify/amqp` that Fedwork's queue does not
 * take, for `assertKnownOptions()`'s `hints`.
 */
export const FEDIFY_AMQP_HINTS: Readonly<Record<string, string>> = {
  delayedQueuePrefix: "Fedwork names its delay queues after the queue " +
    "(<queue>.delay.<ms>, see the manual); remove the option.",
  ordering: "ordering is @fedify/amqp's; with an options object, use orderingPartitions " +
    "(Fedwork names the partition queues <queue>.ordered.<i>).",
};
