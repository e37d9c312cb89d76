// How many hand-outs without an outcome a message may have before it is
// quarantined as poison: the federation option and its check.
import { checkFederationOption } from "../options/federation-option-error.ts";
import { positiveIntegerOption } from "../options/value-options.ts";

/**
 * The default of the `maxDeliveries` federation option: a message handed
 * out a sixth time without an outcome is quarantined.  Five leaves room
 * for a deploy or two that kill workers mid-message, yet stops a message
 * that kills every worker before it costs more than a few restarts.
 * @since 0.4.0
 */
export const DEFAULT_MAX_DELIVERIES = 5;

/**
 * The federation option bounding poison messages.  Part of
 * `FederationOptions`.
 * @since 0.4.0
 */
export interface FederationDeliveryLimitOptions {
  /**
   * How many times a queue may hand a message out without any outcome
   * (each worker that took it died or lost its lease before finishing)
   * before Fedwork stops running it: the next hand-out records it in the
   * failed-task store with `reason: "poison"` (a `PoisonMessageError`),
   * acknowledges it, logs a warning and emits a `failed` event, so that
   * the messages behind it flow again.  Applies to inbox, outbox, fan-out
   * and task messages from queues that count hand-outs
   * (`MessageRedelivery.deliveryCount`); a task's own `maxDeliveries`
   * overrides it.  A positive integer.
   * @default `5`
   * @since 0.4.0
   */
  readonly maxDeliveries?: number;
}

/**
 * Checks a `maxDeliveries` option.
 * @param value The option as given.
 * @param name The option's name in messages (e.g. `"maxDeliveries"`).
 * @returns The limit, {@link DEFAULT_MAX_DELIVERIES} when absent.
 * @throws {RangeError} When it is not a positive integer.
 * @since 0.4.0
 */
export function resolveMaxDeliveries(value: unknown, name = "maxDeliveries"): number {
  return positiveIntegerOption(value, name, DEFAULT_MAX_DELIVERIES);
}

/**
 * Checks the federation's `maxDeliveries` option.
 * @param options The federation options.
 * @returns The limit.
 * @throws {FederationOptionError} When it is not a positive integer; the
 *         message names the option.
 * @since 0.4.0
 */
export function resolveDeliveryLimitOptions(
  options: FederationDeliveryLimitOptions,
): { readonly maxDeliveries: number } {
  return {
    maxDeliveries: checkFederationOption(
      "maxDeliveries",
      () => resolveMaxDeliveries(options.maxDeliveries),
    ),
  };
}

/**
 * Checks the `deliveryCount` option of `processQueuedMessage()`: how many
 * times the queue has handed the message out, counting this time.
 * @param value The option's value.
 * @param where The method, for the message.
 * @returns The count, or `undefined` when not given.
 * @throws {RangeError} When it is not a positive integer.
 * @since 0.4.0
 */
export function checkDeliveryCount(value: unknown, where: string): number | undefined {
  if (
    value !== undefined &&
    !(typeof value === "number" && Number.isSafeInteger(value) && value > 0)
  ) {
    throw new RangeError(
      `${where}'s deliveryCount option must be a positive integer; got ${String(value)}.`,
    );
  }
  return value;
}
