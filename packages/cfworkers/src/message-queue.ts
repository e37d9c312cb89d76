import {
  durationToMilliseconds,
  type MessageQueue,
  type MessageQueueEnqueueOptions,
  type MessageQueueHandler,
  type MessageQueueListenOptions,
} from "@fedwork/core";
import { assertKnownOptions, checkMessagePriority } from "@fedwork/core/queue-kit";
import type { WorkersQueue, WorkersQueueSendRequest } from "./bindings.ts";

/**
 * Options for {@link WorkersMessageQueue}.  There are none yet; the object
 * is checked so that an option meant for `@fedify/cfworkers`
 * (`orderingKv`…) is refused with an explanation instead of ignored.
 * @since 0.3.0
 */
// deno-lint-ignore ban-types
export type WorkersMessageQueueOptions = {};

/** Cloudflare Queues' longest `delaySeconds`: 12 hours. */
export const MAX_DELAY_SECONDS = 12 * 60 * 60;

/** Cloudflare Queues' most messages in one `sendBatch()`. */
export const MAX_BATCH_MESSAGES = 100;

/** Cloudflare Queues' largest message, in bytes. */
const MAX_MESSAGE_BYTES = 128 * 1024;

/** Cloudflare Queues' largest `sendBatch()`, in bytes. */
const MAX_BATCH_BYTES = 256 * 1024;

/**
 * What Cloudflare counts for a message beyond its body; an estimate, kept
 * generous so that a batch never goes over the limit.
 */
const MESSAGE_OVERHEAD_BYTES = 128;

const WHERE = "new WorkersMessageQueue()";
const encoder = new TextEncoder();

/**
 * A {@link MessageQueue} on a Cloudflare Queues producer binding.  It only
 * sends: Cloudflare pushes messages to the Worker's `queue()` handler,
 * which hands them to {@link processQueueBatch}; `listen()` is refused.
 * Create the federation with `manuallyStartQueue: true`.
 *
 * What holds:
 *
 * - **At-least-once.**  Cloudflare keeps a message until the consumer
 *   acknowledges it, and {@link processQueueBatch} acknowledges a message
 *   only after it ran or its retry was sent.  A Worker that dies mid-batch
 *   gets the unacknowledged messages again.
 * - **Delays** up to 12 hours (`delaySeconds`, rounded up to whole
 *   seconds); a longer delay throws a `RangeError`.
 * - **Retries** follow Fedwork's retry policy: a failed attempt's retry is
 *   sent as a new message with the policy's delay, as with any queue
 *   without redelivery in place, so the queue's own `max_retries` only
 *   counts messages that could not be processed at all.
 * - **Ordering keys are not honoured across batches**: Cloudflare may hand
 *   messages to several consumer invocations at once and retries go to the
 *   back.  {@link processQueueBatch} runs the messages of one batch that
 *   share a key one after another, in the batch's order.
 * - **No native deduplication**; Fedwork's fallback, a reservation in the
 *   federation's store, needs `cas()`: it works with {@link D1KvStore},
 *   and tasks with deduplication keys are refused with
 *   {@link WorkersKvStore}, which lacks it.
 * - **Sizes**: a message's JSON text must fit in 128 KiB;
 *   `enqueueMany()` sends batches of at most 100 messages and 256 KiB, one
 *   `sendBatch()` after another (not atomic across batches).
 *
 * @example
 * ```ts ignore
 * import { createFederation } from "@fedwork/core";
 * import { WorkersKvStore, WorkersMessageQueue } from "@fedwork/cfworkers";
 *
 * const federation = createFederation<Env>({
 *   kv: new WorkersKvStore(env.KV),
 *   queue: new WorkersMessageQueue(env.QUEUE),
 *   manuallyStartQueue: true,
 * });
 * ```
 * @since 0.3.0
 */
export class WorkersMessageQueue implements MessageQueue {
  readonly #queue: WorkersQueue;

  /**
   * `false`: Fedwork's retry policy decides retries and sends each as a new
   * message (see the class's notes).  `@fedify/cfworkers` says `true`
   * because there a failed message is retried by Cloudflare.
   * @since 0.3.0
   */
  readonly nativeRetrial = false;

  /**
   * Creates a queue on a Cloudflare Queues producer binding.
   * @param queue The binding, e.g. `env.QUEUE`.
   * @param options None yet; see {@link WorkersMessageQueueOptions}.
   * @throws {TypeError} When the binding is missing or an option is given.
   * @since 0.3.0
   */
  constructor(queue: WorkersQueue, options: WorkersMessageQueueOptions = {}) {
    if (
      queue == null || typeof queue.send !== "function" || typeof queue.sendBatch !== "function"
    ) {
      throw new TypeError(
        `${WHERE} needs a Cloudflare Queues producer binding (e.g. env.QUEUE); got ${typeof queue}.`,
      );
    }
    if (options == null || typeof options !== "object") {
      throw new TypeError(`${WHERE}'s second argument must be an options object.`);
    }
    if ("orderingKv" in options) {
      throw new TypeError(
        `${WHERE} has no orderingKv option: Workers KV cannot hold a lock atomically, so ` +
          "Fedwork does not pretend to order messages across batches with it.  Remove the option; " +
          "processQueueBatch() keeps the order of the messages of one batch that share a key.",
      );
    }
    assertKnownOptions(options, [], {
      where: WHERE,
      hints: {
        orderingKeyPrefix: "it belongs to @fedify/cfworkers's orderingKv lock, which Fedwork " +
          "does not take; remove it (processQueueBatch() keeps the order of the messages of " +
          "one batch that share a key).",
        orderingLockTtl: "it belongs to @fedify/cfworkers's orderingKv lock, which Fedwork " +
          "does not take; remove it (processQueueBatch() keeps the order of the messages of " +
          "one batch that share a key).",
      },
    });
    this.#queue = queue;
  }

  /**
   * Sends a message.
   * @param message The message; JSON-compatible, at most 128 KiB as JSON.
   * @param options The delay (at most 12 hours).  An ordering key travels
   *                inside Fedwork's messages; see the class's notes.
   * @throws {TypeError} When the message is not JSON-compatible or an
   *                     option is unknown.
   * @throws {RangeError} When the delay is negative or longer than 12 hours,
   *                      the message is larger than 128 KiB, or the
   *                      priority is not 0 (Cloudflare Queues has none).
   * @since 0.3.0
   */
  // deno-lint-ignore no-explicit-any
  async enqueue(message: any, options: MessageQueueEnqueueOptions = {}): Promise<void> {
    const delaySeconds = checkEnqueueOptions(options, "enqueue()");
    messageBytes(message);
    await this.#queue.send(message, { contentType: "json", delaySeconds });
  }

  /**
   * Sends several messages with `sendBatch()`, in batches of at most 100
   * messages and 256 KiB, in order.  Every message is checked before any
   * is sent; when a later batch fails, the earlier ones stay sent.
   * @param messages The messages; JSON-compatible, each at most 128 KiB.
   * @param options The delay (at most 12 hours), applied to every message.
   * @throws {TypeError} When a message is not JSON-compatible or an option
   *                     is unknown.
   * @throws {RangeError} When the delay is negative or longer than 12 hours,
   *                      a message is larger than 128 KiB, or the priority
   *                      is not 0 (Cloudflare Queues has none).
   * @since 0.3.0
   */
  // deno-lint-ignore no-explicit-any
  async enqueueMany(messages: readonly any[], options: MessageQueueEnqueueOptions = {}) {
    const delaySeconds = checkEnqueueOptions(options, "enqueueMany()");
    const sizes = messages.map(messageBytes);
    let batch: WorkersQueueSendRequest[] = [];
    let batchBytes = 0;
    for (let i = 0; i < messages.length; i++) {
      const bytes = sizes[i] + MESSAGE_OVERHEAD_BYTES;
      if (
        batch.length > 0 &&
        (batch.length >= MAX_BATCH_MESSAGES || batchBytes + bytes > MAX_BATCH_BYTES)
      ) {
        await this.#queue.sendBatch(batch, { delaySeconds });
        batch = [];
        batchBytes = 0;
      }
      batch.push({ body: messages[i], contentType: "json" });
      batchBytes += bytes;
    }
    if (batch.length > 0) await this.#queue.sendBatch(batch, { delaySeconds });
  }

  /**
   * Refused: on Workers, Cloudflare pushes messages to the Worker's
   * `queue()` handler, which passes them to {@link processQueueBatch}.
   * @param _handler Unused.
   * @param _options Unused.
   * @returns A promise that rejects.
   * @throws {TypeError} Always (as a rejection).
   * @since 0.3.0
   */
  listen(_handler: MessageQueueHandler, _options?: MessageQueueListenOptions): Promise<void> {
    return Promise.reject(
      new TypeError(
        "WorkersMessageQueue cannot be listened to: Cloudflare delivers its messages to the " +
          "Worker's queue() handler.  Call processQueueBatch(batch, { federation, contextData }) " +
          "there, and create the federation with manuallyStartQueue: true.",
      ),
    );
  }
}

/** Checks the enqueue options and returns the delay in whole seconds. */
function checkEnqueueOptions(options: MessageQueueEnqueueOptions, method: string): number {
  if (options == null || typeof options !== "object") {
    throw new TypeError(`WorkersMessageQueue.${method}'s options must be an object.`);
  }
  assertKnownOptions(options, ["delay", "orderingKey", "priority"], {
    where: `WorkersMessageQueue.${method}`,
  });
  if (checkMessagePriority(options.priority) !== 0) {
    throw new RangeError(
      `WorkersMessageQueue.${method} got a priority of ${options.priority}; Cloudflare Queues ` +
        "does not order messages by priority (nativePriority is false), so leave the priority " +
        "option at 0 or use a queue that supports it.",
    );
  }
  if (options.delay === undefined) return 0;
  const delayMs = durationToMilliseconds(options.delay, "delay");
  const delaySeconds = Math.ceil(delayMs / 1000);
  if (delaySeconds > MAX_DELAY_SECONDS) {
    throw new RangeError(
      `WorkersMessageQueue.${method} got a delay of ${delaySeconds} seconds; Cloudflare Queues ` +
        `delays a message at most ${MAX_DELAY_SECONDS} seconds (12 hours).`,
    );
  }
  return delaySeconds;
}

/** The size of a message's JSON text, checked against Cloudflare's limit. */
function messageBytes(message: unknown): number {
  const text = JSON.stringify(message);
  if (text === undefined) {
    throw new TypeError(`A queue message must be JSON-compatible; got ${typeof message}.`);
  }
  const bytes = encoder.encode(text).byteLength;
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new RangeError(
      `A queue message of ${bytes} bytes is too large for Cloudflare Queues, which takes at ` +
        `most ${MAX_MESSAGE_BYTES} bytes (128 KiB) per message.`,
    );
  }
  return bytes;
}
