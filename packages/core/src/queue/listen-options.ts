// The checks of `MessageQueue.listen()` options that every queue shares,
// so that each backend words a bad option the same way.
import { positiveIntegerOption } from "../options/value-options.ts";
import type { MessageQueueListenOptions } from "./message-queue.ts";

/**
 * Checks {@link MessageQueueListenOptions.batchSize}.
 * @param options The options given to `listen()`, if any.
 * @returns The batch size, or `undefined` when none was given.
 * @throws {RangeError} When `batchSize` is not a positive integer.
 * @since 0.4.0
 */
export function listenBatchSize(
  options: MessageQueueListenOptions | undefined,
): number | undefined {
  const value = options?.batchSize;
  return value === undefined ? undefined : positiveIntegerOption(value, "batchSize", 1);
}
