import {
  durationToMilliseconds,
  type MessageQueue,
  type MessageQueueDeduplicatedEnqueueOptions,
  type MessageQueueDepth,
  type MessageQueueEnqueueOptions,
  type MessageQueueHandler,
  type MessageQueueListenOptions,
} from "@fedwork/core";
import {
  checkMessagePriority,
  type LeaseClaimRequest,
  type LeaseClaimResult,
  type LeasedMessage,
  type LeaseEngine,
  ProcessWakeups,
  runLeaseListener,
  RunningListeners,
} from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import type { DenoKv, DenoKvEntry, DenoKvKey } from "./deno-kv.ts";
import { resolveConstructorArguments } from "./constructor-arguments.ts";
import { DenoKvClosedError } from "./errors.ts";
import {
  type DenoKvMessageQueueOptions,
  type ResolvedQueueOptions,
  resolveQueueOptions,
  WHERE,
} from "./options.ts";

const logger = getLogger(["fedwork", "denokv"]);

/**
 * One message as stored under `[...prefix, "m", id]`.  The id orders the
 * queue: a millisecond time, a per-process counter and a process token.
 */
interface StoredMessage {
  /** The message as JSON text. */
  readonly json: string;
  readonly orderingKey: string | null;
  /** When the message may be handed out (milliseconds since the epoch). */
  readonly readyAt: number;
  /** The listener holding the lease, or `null`. */
  readonly owner: string | null;
  /** When the lease runs out. */
  readonly leaseUntil: number;
  /** The deduplication key the message holds, or `null`. */
  readonly deduplicationKey: string | null;
  /**
   * How many times it was handed out since it was enqueued or last
   * redelivered in place: incremented in the claim's atomic operation,
   * reset by a redelivery, taken back by a release.  Absent on messages
   * stored before 0.4.0 (read as 0).
   */
  readonly deliveries?: number;
}

/** A stored delivery count, read as a non-negative integer (0 when not one). */
function storedDeliveries(stored: StoredMessage): number {
  const deliveries = stored.deliveries;
  return typeof deliveries === "number" && Number.isSafeInteger(deliveries) && deliveries > 0
    ? deliveries
    : 0;
}

/** What `[...prefix, "d", key]` holds while a deduplication key is held. */
interface StoredDeduplication {
  /** The id of the message holding the key. */
  readonly id: string;
  /** When the key is free again even if the message is still queued. */
  readonly expires: number;
}

/** A message leased to a listener. */
interface LeasedEntry extends LeasedMessage {
  readonly id: string;
  readonly json: string;
  readonly deliveryCount: number;
}

// Ids sort in enqueue order within a process (the counter breaks ties
// within a millisecond) and by time across processes.
const PROCESS_TOKEN = crypto.randomUUID().slice(0, 8);
let idCounter = 0;

function nextMessageId(now: number): string {
  idCounter = (idCounter + 1) % 1_000_000_000;
  return `${now.toString(36).padStart(10, "0")}-${
    idCounter.toString(36).padStart(6, "0")
  }-${PROCESS_TOKEN}`;
}

// Deno KV refuses an atomic operation of more than 1,000 mutations (and
// 800 KiB); enqueueMany() writes larger batches in several, in order.
const ENQUEUE_BATCH_SIZE = 500;

// In-process wake-ups, by queue prefix: Deno KV cannot notify other
// processes, which poll.
const wakeups = new ProcessWakeups();
const notifyWakeup = (channel: string): void => wakeups.notify(channel);
const subscribeWakeup = (channel: string, wake: () => void): () => void =>
  wakeups.subscribe(channel, wake);

/** The queue's key layout. */
class QueueKeys {
  readonly messages: DenoKvKey;
  readonly #deduplication: DenoKvKey;

  constructor(prefix: readonly string[]) {
    this.messages = [...prefix, "m"];
    this.#deduplication = [...prefix, "d"];
  }

  message(id: string): DenoKvKey {
    return [...this.messages, id];
  }

  deduplication(key: string): DenoKvKey {
    return [...this.#deduplication, key];
  }
}

/**
 * The storage side of one `listen()` call (see `runLeaseListener()`).
 * Every change to a message is an atomic operation checked against the
 * version that was read, so two workers never both win a claim.
 */
class DenoKvLeaseEngine implements LeaseEngine<LeasedEntry> {
  readonly #kv: DenoKv;
  readonly #keys: QueueKeys;
  readonly #options: ResolvedQueueOptions;
  readonly #channel: string;
  readonly #owner = crypto.randomUUID();

  constructor(options: ResolvedQueueOptions, keys: QueueKeys, channel: string) {
    this.#kv = options.kv;
    this.#keys = keys;
    this.#options = options;
    this.#channel = channel;
  }

  async claim(request: LeaseClaimRequest<LeasedEntry>): Promise<LeaseClaimResult<LeasedEntry>> {
    for (const message of request.acks) await this.#acknowledge(message);
    const handBackAt = Date.now() + this.#options.leaseMs;
    for (const message of request.handBacks) {
      await this.#update(message, (stored) => ({ ...stored, owner: null, readyAt: handBackAt }));
    }
    if (request.count === 0) return { messages: [] };
    const now = Date.now();
    const leaseUntil = now + this.#options.leaseMs;
    const mine = new Set([...request.held.map((m) => m.id)]);
    const messages: LeasedEntry[] = [];
    // A key is held by the first message that has it, whatever its state:
    // later messages with the key wait until it is deleted.
    const keysSeen = new Set<string>();
    let wakeAt = Infinity;
    for await (const entry of this.#kv.list({ prefix: this.#keys.messages })) {
      const stored = entry.value as StoredMessage;
      const id = entry.key[entry.key.length - 1] as string;
      const key = stored.orderingKey;
      const keyFree = key === null || !keysSeen.has(key);
      if (key !== null) keysSeen.add(key);
      if (!keyFree || mine.has(id)) continue;
      if (stored.readyAt > now) {
        wakeAt = Math.min(wakeAt, stored.readyAt);
        continue;
      }
      if (stored.owner !== null && stored.leaseUntil > now) {
        wakeAt = Math.min(wakeAt, stored.leaseUntil);
        continue;
      }
      if (messages.length >= request.count) break;
      // Counted in the claim itself, before any handler runs: a worker
      // killed by the message has still counted the hand-out.
      const deliveries = storedDeliveries(stored) + 1;
      const result = await this.#kv.atomic()
        .check(entry)
        .set(
          entry.key,
          { ...stored, owner: this.#owner, leaseUntil, deliveries } satisfies StoredMessage,
        )
        .commit();
      // A failed check means another worker changed it first.
      if (result.ok) messages.push({ id, json: stored.json, deliveryCount: deliveries });
    }
    if (messages.length === request.count) return { messages };
    return {
      messages,
      waitMs: wakeAt === Infinity ? undefined : Math.max(0, wakeAt - Date.now()),
    };
  }

  /** Deletes a message (and frees its deduplication key) if still ours. */
  async #acknowledge(message: LeasedEntry): Promise<void> {
    const key = this.#keys.message(message.id);
    while (true) {
      const entry = await this.#kv.get(key);
      const stored = entry.value as StoredMessage | null;
      if (stored == null || stored.owner !== this.#owner) return;
      const operation = this.#kv.atomic().check(entry).delete(key);
      if (stored.deduplicationKey !== null) {
        const dedupKey = this.#keys.deduplication(stored.deduplicationKey);
        const held = await this.#kv.get(dedupKey);
        if ((held.value as StoredDeduplication | null)?.id === message.id) {
          operation.check(held).delete(dedupKey);
        }
      }
      if ((await operation.commit()).ok) return;
    }
  }

  /**
   * Rewrites a message this listener holds; returns `false` (changing
   * nothing) when the lease is no longer its own.
   */
  async #update(
    message: LeasedEntry,
    change: (stored: StoredMessage) => StoredMessage,
  ): Promise<boolean> {
    const key = this.#keys.message(message.id);
    while (true) {
      const entry = await this.#kv.get(key);
      const stored = entry.value as StoredMessage | null;
      if (stored == null || stored.owner !== this.#owner) return false;
      const result = await this.#kv.atomic().check(entry).set(key, change(stored)).commit();
      if (result.ok) return true;
    }
  }

  async release(messages: readonly LeasedEntry[]): Promise<void> {
    for (const message of messages) {
      // Never started: the hand-out is taken back.
      await this.#update(message, (stored) => ({
        ...stored,
        owner: null,
        leaseUntil: 0,
        deliveries: Math.max(0, storedDeliveries(stored) - 1),
      }));
    }
    notifyWakeup(this.#channel);
  }

  async extendLeases(messages: readonly LeasedEntry[]): Promise<void> {
    const leaseUntil = Date.now() + this.#options.leaseMs;
    for (const message of messages) {
      await this.#update(message, (stored) => ({ ...stored, leaseUntil }));
    }
  }

  async redeliver(message: LeasedEntry, payload: unknown, delayMs: number): Promise<void> {
    const json = encodeMessage(payload, "The redelivered message");
    const readyAt = Date.now() + delayMs;
    const stored = await this.#update(
      message,
      // An outcome: the count starts again.
      (current) => ({ ...current, json, readyAt, owner: null, leaseUntil: 0, deliveries: 0 }),
    );
    if (!stored) {
      throw new Error(
        `Message ${message.id} was not redelivered: its lease ran out and another worker ` +
          "took it over.",
      );
    }
    notifyWakeup(this.#channel);
  }

  decode(message: LeasedEntry): unknown {
    return JSON.parse(message.json);
  }

  subscribe(wake: () => void): () => void {
    return subscribeWakeup(this.#channel, wake);
  }
}

/**
 * A durable {@link MessageQueue} on Deno KV (`Deno.openKv()`): a local
 * SQLite-backed file on Deno, or Deno Deploy's database.  It does not use
 * Deno KV's own queue (`kv.enqueue()`/`kv.listenQueue()`), which drops a
 * message after its last retry, has no ordering keys and cannot be shared
 * by competing listeners the way Fedwork's queues are; instead each
 * message is an entry leased to one listener at a time with atomic
 * operations checked against the entry's version, like Fedwork's SQLite
 * and PostgreSQL queues.
 *
 * Guarantees: at-least-once delivery (a crashed worker's message is handed
 * out again once its lease runs out; a handler that throws gets its
 * message again after one lease); delivery counts (since 0.4.0: the
 * handler's `MessageRedelivery.deliveryCount`, counted in the claim's
 * atomic operation before the handler runs, kept when a worker dies or a
 * handler throws, reset by `redeliver()`, not counted for a prefetched
 * message handed back unstarted when a listener stops); ordering keys (a message waits for
 * every earlier message with its key); delays; native deduplication
 * (`enqueueDeduplicated()`, atomic across processes).  Priorities are
 * refused (`nativePriority` is `false`).
 *
 * Cost: every claim reads the queue's entries in order up to the first
 * claimable ones, so a queue with a long backlog of delayed or leased
 * messages costs more per claim than an indexed engine; enqueues from
 * other processes are found by polling.
 *
 * @example
 * ```ts ignore
 * import { DenoKvMessageQueue } from "@fedwork/denokv";
 *
 * const queue = new DenoKvMessageQueue({ kv: await Deno.openKv("fedwork.kv") });
 * ```
 * @since 0.3.0
 */
export class DenoKvMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * Always `false`: Fedwork's retry policy decides about failed messages.
   * @since 0.3.0
   */
  readonly nativeRetrial = false;

  /**
   * Always `true`: {@link DenoKvMessageQueue.enqueueDeduplicated} checks
   * and writes in one atomic operation.
   * @since 0.3.0
   */
  readonly nativeDeduplication = true;

  /**
   * Always `false`: the queue hands out messages in enqueue order and
   * refuses a priority other than 0.
   * @since 0.3.0
   */
  readonly nativePriority = false;

  readonly #options: ResolvedQueueOptions;
  readonly #keys: QueueKeys;
  readonly #channel: string;
  readonly #listeners = new RunningListeners();
  #closed = false;

  /**
   * Creates a queue on an open Deno KV database.
   * @param options The database, key prefix, lease, poll interval,
   *                concurrency and prefetch.
   * @throws {TypeError} When an option is missing, unknown or of the wrong
   *                     type (its name is in the message).
   * @throws {RangeError} When an option is out of range.
   * @since 0.3.0
   */
  constructor(options: DenoKvMessageQueueOptions);
  /**
   * Creates a queue on an open Deno KV database, as `@fedify/denokv`'s
   * `new DenoKvMessageQueue(kv, options?)` does.  The queue never closes
   * the database.  Of Fedify's options, `orderingLockPrefix` is refused:
   * this queue keeps ordering keys without a lock (see the manual).
   * @param kv An open Deno KV database, e.g. `await Deno.openKv()`.
   * @param options Fedwork's other options: key prefix, lease, poll
   *                interval, concurrency and prefetch.
   * @throws {TypeError} When the first argument is not a Deno KV database or
   *                     an option is unknown or of the wrong type.
   * @throws {RangeError} When an option is out of range.
   * @since 0.4.0
   */
  constructor(kv: DenoKv, options?: Omit<DenoKvMessageQueueOptions, "kv">);
  constructor(
    first: DenoKvMessageQueueOptions | DenoKv,
    second?: Omit<DenoKvMessageQueueOptions, "kv">,
  ) {
    this.#options = resolveQueueOptions(
      resolveConstructorArguments(first, second, WHERE, "new DenoKvMessageQueue(kv, options?)"),
    );
    this.#keys = new QueueKeys(this.#options.prefix);
    this.#channel = JSON.stringify(this.#options.prefix);
  }

  #assertOpen(): void {
    if (this.#closed) throw new DenoKvClosedError("DenoKvMessageQueue");
  }

  /**
   * Adds a message.
   * @param message A JSON-compatible value.
   * @param options The delay and ordering key.
   * @returns Resolves once Deno KV committed it.
   * @throws {DenoKvClosedError} When the queue was closed.
   * @throws {TypeError} When the message is not JSON-serializable or an
   *                     option has the wrong type.
   * @throws {RangeError} When `delay` is negative or `priority` is not 0.
   * @since 0.3.0
   */
  enqueue(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    return this.enqueueMany([message], options);
  }

  /**
   * Adds several messages in order, in one atomic operation per 500
   * messages (Deno KV allows at most 1,000 mutations in one): a batch of
   * up to 500 is stored whole or not at all.
   * @param messages JSON-compatible values.
   * @param options The delay and ordering key, applied to every message.
   * @returns Resolves once Deno KV committed them.
   * @throws {DenoKvClosedError} When the queue was closed.
   * @throws {TypeError} When a message is not JSON-serializable or an
   *                     option has the wrong type.
   * @throws {RangeError} When `delay` is negative or `priority` is not 0.
   * @since 0.3.0
   */
  async enqueueMany(
    // deno-lint-ignore no-explicit-any
    messages: readonly any[],
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    const { delayMs, orderingKey } = this.#checkEnqueueOptions(options);
    const encoded = messages.map((message, index) => encodeMessage(message, index));
    if (encoded.length === 0) return;
    const now = Date.now();
    for (let start = 0; start < encoded.length; start += ENQUEUE_BATCH_SIZE) {
      const operation = this.#options.kv.atomic();
      for (const json of encoded.slice(start, start + ENQUEUE_BATCH_SIZE)) {
        operation.set(
          this.#keys.message(nextMessageId(now)),
          {
            json,
            orderingKey,
            readyAt: now + delayMs,
            owner: null,
            leaseUntil: 0,
            deduplicationKey: null,
          } satisfies StoredMessage,
        );
      }
      const result = await operation.commit();
      if (!result.ok) throw new Error("Deno KV did not commit the enqueued messages.");
      notifyWakeup(this.#channel);
    }
  }

  /**
   * Adds a message unless a message enqueued with the same deduplication
   * key less than `deduplicationTtl` ago is still queued (waiting, running
   * or waiting for a retry in place).  The check and the write are one
   * atomic operation, so concurrent calls from any number of processes add
   * one message.  The key is free again once that message is acknowledged.
   * @param message A JSON-compatible value.
   * @param options The delay, ordering key, deduplication key and TTL.
   * @returns `true` when the message was added, `false` when the key was held.
   * @throws {DenoKvClosedError} When the queue was closed.
   * @throws {TypeError} When the message is not JSON-serializable or an
   *                     option has the wrong type.
   * @throws {RangeError} When `delay` or `deduplicationTtl` is negative, or
   *                      `priority` is not 0.
   * @since 0.3.0
   */
  async enqueueDeduplicated(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ): Promise<boolean> {
    const { delayMs, orderingKey } = this.#checkEnqueueOptions(options);
    const ttlMs = durationToMilliseconds(options.deduplicationTtl, "deduplicationTtl");
    const deduplicationKey: unknown = options.deduplicationKey;
    if (typeof deduplicationKey !== "string" || deduplicationKey === "") {
      throw new TypeError("The deduplicationKey option must be a non-empty string.");
    }
    const json = encodeMessage(message, "The message");
    const { kv } = this.#options;
    const dedupKey = this.#keys.deduplication(deduplicationKey);
    while (true) {
      const held: DenoKvEntry = await kv.get(dedupKey);
      const now = Date.now();
      const holder = held.value as StoredDeduplication | null;
      if (holder != null && holder.expires > now) return false;
      const id = nextMessageId(now);
      const result = await kv.atomic()
        .check(held)
        .set(dedupKey, { id, expires: now + ttlMs } satisfies StoredDeduplication, {
          expireIn: Math.max(1, Math.ceil(ttlMs)),
        })
        .set(
          this.#keys.message(id),
          {
            json,
            orderingKey,
            readyAt: now + delayMs,
            owner: null,
            leaseUntil: 0,
            deduplicationKey,
          } satisfies StoredMessage,
        )
        .commit();
      if (result.ok) {
        notifyWakeup(this.#channel);
        return true;
      }
      // Another call changed the key in between: look again.
    }
  }

  #checkEnqueueOptions(
    options: MessageQueueEnqueueOptions,
  ): { delayMs: number; orderingKey: string | null } {
    this.#assertOpen();
    const delayMs = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    if (delayMs < 0) throw new RangeError("The delay option must not be negative.");
    const orderingKey = options.orderingKey ?? null;
    if (orderingKey !== null && typeof orderingKey !== "string") {
      throw new TypeError(`The orderingKey option must be a string; got ${typeof orderingKey}.`);
    }
    if (checkMessagePriority(options.priority) !== 0) {
      throw new RangeError(
        "DenoKvMessageQueue does not order messages by priority (nativePriority is false); " +
          "leave the priority option at 0 or use a queue that supports it.",
      );
    }
    return { delayMs, orderingKey };
  }

  /**
   * Counts the queued messages by reading all of them.  `ready` excludes
   * messages leased by a worker; `queued` includes them.
   * @returns The counts.
   * @throws {DenoKvClosedError} When the queue was closed.
   * @since 0.3.0
   */
  async getDepth(): Promise<MessageQueueDepth> {
    this.#assertOpen();
    const now = Date.now();
    let queued = 0;
    let ready = 0;
    let delayed = 0;
    for await (const entry of this.#options.kv.list({ prefix: this.#keys.messages })) {
      const stored = entry.value as StoredMessage;
      queued++;
      if (stored.readyAt > now) delayed++;
      else if (stored.owner === null || stored.leaseUntil <= now) ready++;
    }
    return { queued, ready, delayed };
  }

  /**
   * Hands messages to `handler` until `options.signal` aborts or the queue
   * is closed.  A message is deleted once its handler returns; when the
   * handler throws, it is handed out again after one lease.  The handler's
   * second argument, a `MessageRedelivery`, stores a new version of the
   * message in place and hands it out again after a delay.
   * @param handler Processes one message.
   * @param options The abort signal.
   * @returns Resolves after the signal aborted and the running handlers
   *          finished.
   * @throws {DenoKvClosedError} When the queue was closed.
   * @since 0.3.0
   */
  listen(handler: MessageQueueHandler, options: MessageQueueListenOptions = {}): Promise<void> {
    if (this.#closed) return Promise.reject(new DenoKvClosedError("DenoKvMessageQueue"));
    const { concurrency, prefetch, leaseMs, heartbeatMs, pollMs, prefix } = this.#options;
    return this.#listeners.track(runLeaseListener(
      new DenoKvLeaseEngine(this.#options, this.#keys, this.#channel),
      handler,
      {
        concurrency,
        prefetch,
        batchSize: options.batchSize,
        heartbeatMs,
        pollMs,
        handBackDelayMs: leaseMs,
        queueName: `Deno KV queue ${JSON.stringify(prefix)}`,
        signal: this.#listeners.signal(options.signal),
        logger,
      },
    ));
  }

  /**
   * Stops this instance's listeners (waiting for their running handlers).
   * Stored messages stay in the database, which stays open: it belongs to
   * the caller.
   * @since 0.3.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#listeners.close();
  }
}

/**
 * Encodes a message as JSON text.
 * @param message The message.
 * @param what Its index in an `enqueueMany()` call, or what to call it.
 */
function encodeMessage(message: unknown, what: number | string): string {
  const name = typeof what === "number" ? `Message ${what}` : what;
  let text: string | undefined;
  try {
    text = JSON.stringify(message);
  } catch (error) {
    throw new TypeError(`${name} cannot be encoded as JSON: ${error}`, { cause: error });
  }
  if (text === undefined) {
    throw new TypeError(`${name} cannot be encoded as JSON (got ${typeof message}).`);
  }
  return text;
}
