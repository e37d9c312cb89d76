import type { MessageQueue, MessageQueueHandler } from "@fedwork/core";

/**
 * Wraps a queue so that the first `failures` attempts to store a retry
 * fail, as they do while the engine is briefly unreachable: `enqueue()` of
 * a message with `attempt > 0` rejects, and so does the handler's
 * `MessageRedelivery.redeliver()`.  Everything else passes through, so the
 * wrapped queue's own redelivery of a message whose handler threw is what
 * the test observes.
 * @param inner The queue under test.
 * @param failures How many retry stores fail.
 * @returns The wrapping queue.
 */
export function failRetryStores(inner: MessageQueue, failures: number): MessageQueue {
  let left = failures;
  const fail = () => left > 0 && left-- > 0;
  const refused = () => Promise.reject(new Error("Injected fault: the engine is unreachable."));
  // Siblings (a queue that separates its roles, capability routing) share
  // the one fault budget.
  const wrap = (queue: MessageQueue): MessageQueue => ({
    get nativeRetrial() {
      return queue.nativeRetrial;
    },
    get separateRoles() {
      return queue.separateRoles;
    },
    ...(typeof queue.derive === "function"
      ? { derive: (channel: string) => wrap(queue.derive!(channel)) }
      : {}),
    enqueue: (message, options) =>
      typeof message?.attempt === "number" && message.attempt > 0 && fail()
        ? refused()
        : queue.enqueue(message, options),
    listen: (handler: MessageQueueHandler, options) =>
      queue.listen(
        (message, redelivery) =>
          handler(
            message,
            redelivery == null ? undefined : {
              redeliver: (next, redeliveryOptions) =>
                fail() ? refused() : redelivery.redeliver(next, redeliveryOptions),
            },
          ),
        options,
      ),
  });
  return wrap(inner);
}
