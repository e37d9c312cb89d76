// Message priority: one range and one check for every queue and for the
// task layer, so that a priority means the same on every backend.

/**
 * The lowest priority a message can have.
 * @since 0.3.0
 */
export const MIN_MESSAGE_PRIORITY = -5;

/**
 * The highest priority a message can have.
 * @since 0.3.0
 */
export const MAX_MESSAGE_PRIORITY = 5;

/**
 * Checks a priority option: an integer from {@link MIN_MESSAGE_PRIORITY} to
 * {@link MAX_MESSAGE_PRIORITY}, higher first, 0 (the default) when absent.
 * @param value The option's value.
 * @param optionName The option's name, for the error message.
 * @returns The priority.
 * @throws {RangeError} When the value is not an integer in the range.
 * @since 0.3.0
 */
export function checkMessagePriority(value: unknown, optionName = "priority"): number {
  if (value === undefined) return 0;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value < MIN_MESSAGE_PRIORITY ||
    value > MAX_MESSAGE_PRIORITY
  ) {
    throw new RangeError(
      `The ${optionName} option must be an integer from ${MIN_MESSAGE_PRIORITY} to ` +
        `${MAX_MESSAGE_PRIORITY} (higher runs first; 0 is the default); got ${
          typeof value === "number" ? value : typeof value
        }.`,
    );
  }
  return value;
}

/**
 * Refuses a priority a queue cannot honour: a priority other than 0 on a
 * queue without `nativePriority`, which would ignore it.
 * @param priority The checked priority.
 * @param queue The queue, or what it says of itself.
 * @param queueName How to name the queue in the message.
 * @throws {TypeError} When the priority is not 0 and the queue does not
 *         order by priority.
 * @since 0.3.0
 */
export function assertPrioritySupported(
  priority: number,
  queue: { readonly nativePriority?: boolean },
  queueName: string,
): void {
  if (priority === 0 || queue.nativePriority === true) return;
  throw new TypeError(
    `${queueName} does not order messages by priority (nativePriority is not true), so the ` +
      `priority option (${priority}) would be ignored.  Leave it out, or use a queue that ` +
      "supports priorities (see the backend's capabilities in the manual).",
  );
}
