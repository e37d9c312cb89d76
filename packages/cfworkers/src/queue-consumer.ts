import { type DurationInput, durationToMilliseconds, type Federation } from "@fedwork/core";
import { assertKnownOptions, positiveIntegerOption } from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import type { WorkersMessageBatch, WorkersQueueMessage } from "./bindings.ts";
import { MAX_DELAY_SECONDS } from "./message-queue.ts";

const logger = getLogger(["fedwork", "cfworkers"]);

/**
 * Options for {@link processQueueBatch}.
 * @typeParam TContextData The federation's context data.
 * @since 0.3.0
 */
export interface ProcessQueueBatchOptions<TContextData> {
  /** The federation whose messages the queue carries.  Required. */
  readonly federation: Pick<Federation<TContextData>, "processQueuedMessage">;

  /** The context data to run the messages with.  Required. */
  readonly contextData: TContextData;

  /**
   * How long Cloudflare waits before delivering again a message that could
   * not be processed (its retry could not be sent, say).  Rounded up to
   * whole seconds, at most 12 hours.  One minute by default.
   */
  readonly retryDelay?: DurationInput;

  /**
   * How many messages of the batch run at once.  Messages that share an
   * ordering key run one after another whatever this is.  4 by default.
   */
  readonly concurrency?: number;
}

/**
 * What {@link processQueueBatch} did with one message.
 * @since 0.3.0
 */
export interface ProcessedQueueMessage {
  /** Cloudflare's id of the message. */
  readonly id: string;
  /**
   * `"acked"` when it ran (completed, failed for good, dropped, or failed
   * with its retry sent as a new message); `"retried"` when Cloudflare was
   * asked to deliver it again with `message.retry()`.
   */
  readonly result: "acked" | "retried";
}

const WHERE = "processQueueBatch()";

/**
 * Runs the messages of a Cloudflare Queues batch through the federation:
 * the glue a Worker's `queue()` handler calls.  Each message goes to
 * `federation.processQueuedMessage()`, which runs it and, when it fails
 * and the retry policy says so, sends its retry with the policy's delay.
 * The message is then acknowledged with `message.ack()`.  When processing
 * throws (the retry could not be sent, or something unexpected broke), the
 * message is handed back with `message.retry({ delaySeconds })`, so it is
 * never lost; those redeliveries count against the consumer's
 * `max_retries`.
 *
 * Each message's `attempts` goes to `processQueuedMessage()` as its
 * `deliveryCount` (since 0.4.0): a message Cloudflare has delivered more
 * than the federation's `maxDeliveries` times without an outcome (its
 * Worker crashed, ran out of memory or CPU time on it, or its retry could
 * not be sent) is quarantined in the failed-task store instead of run
 * again.  Cloudflare counts per batch: a Worker that dies on one message
 * raises the `attempts` of its whole batch.  Keep the consumer's
 * `max_retries` above `maxDeliveries` (Cloudflare's default of 3 is
 * below Fedwork's default of 5), or Cloudflare drops the message (or
 * moves it to its dead-letter queue) before Fedwork can quarantine it.
 *
 * @example
 * ```ts ignore
 * import { processQueueBatch } from "@fedwork/cfworkers";
 *
 * export default {
 *   fetch: (request, env) => getFederation(env).fetch(request, { contextData: env }),
 *   async queue(batch, env) {
 *     await processQueueBatch(batch, { federation: getFederation(env), contextData: env });
 *   },
 * } satisfies ExportedHandler<Env>;
 * ```
 * @param batch The batch the `queue()` handler received.
 * @param options The federation, the context data and how to retry.
 * @returns What was done with each message, in the batch's order.
 * @throws {TypeError} When an option is missing, unknown or of the wrong
 *                     type.
 * @throws {RangeError} When `retryDelay` is negative or over 12 hours, or
 *                      `concurrency` is not a positive integer.
 * @since 0.3.0
 */
export async function processQueueBatch<TContextData>(
  batch: WorkersMessageBatch,
  options: ProcessQueueBatchOptions<TContextData>,
): Promise<ProcessedQueueMessage[]> {
  if (batch == null || !Array.isArray(batch.messages)) {
    throw new TypeError(`${WHERE} needs the MessageBatch the queue() handler received.`);
  }
  if (options == null || typeof options !== "object") {
    throw new TypeError(`${WHERE} needs an options object with federation and contextData.`);
  }
  assertKnownOptions(options, ["federation", "contextData", "retryDelay", "concurrency"], {
    where: WHERE,
  });
  const { federation } = options;
  if (federation == null || typeof federation.processQueuedMessage !== "function") {
    throw new TypeError(`${WHERE} needs the federation option (a Federation).`);
  }
  if (!("contextData" in options)) {
    throw new TypeError(`${WHERE} needs the contextData option (undefined is fine).`);
  }
  const retryDelaySeconds = Math.ceil(
    durationToMilliseconds(options.retryDelay ?? { minutes: 1 }, "retryDelay") / 1000,
  );
  if (retryDelaySeconds > MAX_DELAY_SECONDS) {
    throw new RangeError(`${WHERE}'s retryDelay must be at most 12 hours.`);
  }
  const concurrency = positiveIntegerOption(options.concurrency, "concurrency", 4);

  const results = new Map<WorkersQueueMessage, ProcessedQueueMessage["result"]>();
  const processOne = async (message: WorkersQueueMessage): Promise<void> => {
    try {
      await federation.processQueuedMessage(
        options.contextData,
        message.body,
        deliveryCountOf(message),
      );
      message.ack();
      results.set(message, "acked");
    } catch (error) {
      logger.error(
        "Could not process queue message {messageId} (delivery {attempts}); Cloudflare " +
          "delivers it again in {delaySeconds} s: {error}",
        {
          messageId: message.id,
          attempts: message.attempts,
          delaySeconds: retryDelaySeconds,
          error,
        },
      );
      message.retry({ delaySeconds: retryDelaySeconds });
      results.set(message, "retried");
    }
  };

  // One lane per ordering key (and one per message without a key), so
  // that messages sharing a key run in the batch's order.
  const lanes = new Map<unknown, WorkersQueueMessage[]>();
  for (const message of batch.messages) {
    const key = orderingKeyOf(message.body) ?? message;
    const lane = lanes.get(key);
    if (lane == null) lanes.set(key, [message]);
    else lane.push(message);
  }
  const pending = [...lanes.values()];
  const runLanes = async (): Promise<void> => {
    for (let lane = pending.shift(); lane != null; lane = pending.shift()) {
      for (const message of lane) await processOne(message);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, pending.length) }, runLanes));
  return batch.messages.map((message) => ({ id: message.id, result: results.get(message)! }));
}

/**
 * Cloudflare's hand-out count (`attempts`, 1-based, raised by every
 * redelivery: a `retry()`, a Worker that crashed or ran out of time or
 * memory mid-batch) as `processQueuedMessage()`'s `deliveryCount`; nothing
 * when it is not a positive integer (an older runtime, a hand-made batch).
 */
function deliveryCountOf(message: WorkersQueueMessage): { deliveryCount: number } | undefined {
  const attempts: unknown = message.attempts;
  return typeof attempts === "number" && Number.isSafeInteger(attempts) && attempts > 0
    ? { deliveryCount: attempts }
    : undefined;
}

function orderingKeyOf(body: unknown): string | undefined {
  if (body == null || typeof body !== "object") return undefined;
  const key = (body as { orderingKey?: unknown }).orderingKey;
  return typeof key === "string" ? key : undefined;
}
