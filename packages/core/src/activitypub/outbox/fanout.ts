// How a fan-out worker hands out a fan-out's deliveries: all into the
// outbox queue (the default), or the first attempts of as many as it can
// make within a time budget itself, a few at once, and the rest into the
// queue (the fanoutDeliveries option).
import type { OutboxMessage } from "./messages.ts";
import { assertKnownOptions } from "../../options/known-options.ts";
import { positiveDurationOption, positiveIntegerOption } from "../../options/value-options.ts";
import type { DurationInput } from "../../time/duration.ts";
import {
  checkFederationOption,
  FederationOptionError,
} from "../../options/federation-option-error.ts";

/**
 * The `fanoutDeliveries` federation option: the fan-out worker makes the
 * first attempt of a fan-out's deliveries itself, `concurrency` at once,
 * until `budget` has passed, and enqueues only the rest and the retries
 * into the outbox queue.  With an outbox worker that runs one message at a
 * time, a fan-out to 1,000 inboxes otherwise waits for 1,000 deliveries
 * one after another.
 *
 * What it changes, so that you can judge whether it is safe for you:
 * - **Where the requests come from.**  The first attempts leave from the
 *   fan-out worker's process, not the outbox worker's.  If your outbox
 *   workers run where they do for a reason (an egress address, a proxy),
 *   leave this off.
 * - **How many requests are in flight.**  Up to `concurrency` per fan-out
 *   being run, besides the outbox workers' own.
 * - **How long a fan-out runs.**  At most `budget` plus one delivery's time
 *   limit (`remoteRequests.deliveryTimeout`); the federation refuses a
 *   budget that would not leave the fan-out inside `outboxTimeout`.
 * - **Nothing is lost, some may be sent twice.**  Each direct delivery
 *   goes through the same pipeline as one from the queue (host health,
 *   events, metrics, failed-delivery records, `onPermanentFailure`); a
 *   failed one is retried through the outbox queue with its retry policy.
 *   If the fan-out's worker dies midway, the queue hands the fan-out out
 *   again and the deliveries it had made are made again, as they are when
 *   a worker dies between enqueuing the deliveries and acknowledging the
 *   fan-out.  Receivers drop an activity they have seen by its id.
 * - **Deliveries with an ordering key** always go through the queue, which
 *   keeps their order.
 * @since 0.3.0
 */
export interface FanoutDeliveriesOptions {
  /** How many deliveries of one fan-out are attempted at once.  Required. */
  readonly concurrency: number;
  /**
   * How long the fan-out worker keeps starting deliveries itself; those
   * not started by then are enqueued.
   * @default 10 seconds
   */
  readonly budget?: DurationInput;
}

/**
 * {@link FanoutDeliveriesOptions}, checked.  Internal.
 * @since 0.3.0
 */
export interface ResolvedFanoutDeliveries {
  readonly concurrency: number;
  readonly budgetMs: number;
}

const DEFAULT_BUDGET_MS = 10_000;
/** More direct deliveries at once than this only queue up on sockets. */
const MAX_CONCURRENCY = 256;

/**
 * Checks the `fanoutDeliveries` option against the fan-out's time limit.
 * @param option The option's value.
 * @param fanoutTimeLimitMs The fan-out's time limit (`outboxTimeout`), or
 *                          `null` for none.
 * @param deliveryTimeoutMs One delivery's time limit.
 * @returns The resolved option, or `undefined` when it is off.
 * @throws {FederationOptionError} When a value is invalid; the message
 *         names it.
 * @since 0.3.0
 */
export function resolveFanoutDeliveries(
  option: FanoutDeliveriesOptions | false | undefined,
  fanoutTimeLimitMs: number | null,
  deliveryTimeoutMs: number,
): ResolvedFanoutDeliveries | undefined {
  if (option == null || option === false) return undefined;
  if (typeof option !== "object") {
    throw new FederationOptionError(
      "fanoutDeliveries",
      "The fanoutDeliveries option must be an object such as { concurrency: 8 } or false.",
    );
  }
  assertKnownOptions(option, ["concurrency", "budget"], { prefix: "fanoutDeliveries." });
  const concurrency = checkFederationOption("fanoutDeliveries.concurrency", () => {
    if (option.concurrency === undefined) {
      throw new RangeError("The fanoutDeliveries.concurrency option is required.");
    }
    return positiveIntegerOption(
      option.concurrency,
      "fanoutDeliveries.concurrency",
      1,
      MAX_CONCURRENCY,
    );
  });
  const budgetMs = checkFederationOption(
    "fanoutDeliveries.budget",
    () => positiveDurationOption(option.budget, "fanoutDeliveries.budget", DEFAULT_BUDGET_MS),
  );
  if (fanoutTimeLimitMs != null && budgetMs + deliveryTimeoutMs >= fanoutTimeLimitMs) {
    throw new FederationOptionError(
      "fanoutDeliveries.budget",
      `The fanoutDeliveries.budget option (${budgetMs} ms) plus one delivery's time limit ` +
        `(remoteRequests.deliveryTimeout, ${deliveryTimeoutMs} ms) must be shorter than a ` +
        `fan-out's time limit (outboxTimeout, ${fanoutTimeLimitMs} ms), or the fan-out would ` +
        "time out and be sent again.",
    );
  }
  return { concurrency, budgetMs };
}

/**
 * What {@link fanOutDirectly} needs from the federation.  Internal.
 * @since 0.3.0
 */
export interface DirectFanoutOptions extends ResolvedFanoutDeliveries {
  /** The fan-out run's signal: once it aborts, no delivery is started. */
  readonly signal: AbortSignal;
  /**
   * Makes one delivery's first attempt through the dispatcher, which
   * enqueues its retry when it fails; rejects only when that retry could
   * not be stored.
   */
  readonly deliver: (message: OutboxMessage) => Promise<unknown>;
  /** Enqueues deliveries into the outbox queue. */
  readonly enqueue: (messages: OutboxMessage[]) => Promise<void>;
  /** The clock, in milliseconds; `performance.now()` by default. */
  readonly now?: () => number;
}

/**
 * Makes the first attempt of a fan-out's deliveries, `concurrency` at a
 * time, until the budget has passed or the signal aborts, then enqueues
 * those not started and those whose retry could not be stored.  Internal.
 * @param messages The deliveries, in order.
 * @param options The budget, the signal and how to deliver and enqueue.
 * @returns How many were attempted here and how many were enqueued.
 * @throws {unknown} When the enqueue fails; the fan-out is then retried.
 * @since 0.3.0
 */
export async function fanOutDirectly(
  messages: readonly OutboxMessage[],
  options: DirectFanoutOptions,
): Promise<{ readonly attempted: number; readonly enqueued: number }> {
  const now = options.now ?? (() => performance.now());
  const deadline = now() + options.budgetMs;
  let next = 0;
  const unstored: OutboxMessage[] = [];
  const lane = async () => {
    while (next < messages.length && !options.signal.aborted && now() < deadline) {
      const message = messages[next++];
      try {
        await options.deliver(message);
      } catch {
        // Its retry could not be stored (the dispatcher logged why): it
        // goes into the queue with the rest, or fails the fan-out.
        unstored.push(message);
      }
    }
  };
  const lanes = Math.min(options.concurrency, messages.length);
  await Promise.all(Array.from({ length: lanes }, lane));
  const rest = [...messages.slice(next), ...unstored];
  if (rest.length > 0) await options.enqueue(rest);
  return { attempted: next, enqueued: rest.length };
}
