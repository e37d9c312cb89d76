import type {
  MessageQueue,
  MessageQueueDeduplicatedEnqueueOptions,
  MessageQueueDepth,
  MessageQueueEnqueueOptions,
  MessageQueueHandler,
  MessageQueueListenOptions,
} from "@fedwork/core";
import { durationToMilliseconds } from "@fedwork/core";
import {
  assertKnownOptions,
  checkMessagePriority,
  type LeaseClaimResult,
  type LeasedMessage,
  type LeaseEngine,
  runLeaseListener,
  SiblingQueues,
} from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import type { RedisClient, RedisConnectionOptions } from "./connection.ts";
import { RedisConnectionSource } from "./connection.ts";
import { FEDIFY_REDIS_HINTS, resolveConstructorArguments } from "./constructor-arguments.ts";
import { RedisLeaseLostError, RedisMessageQueueClosedError } from "./errors.ts";
import {
  addLocalWakeListener,
  isLocalWakeOrigin,
  LOCAL_WAKE_ORIGIN,
  wakeLocalListeners,
} from "./local-wake.ts";
import {
  type RedisMessageQueueOptions,
  type ResolvedQueueOptions,
  resolveQueueOptions,
} from "./options.ts";
import {
  claimScript,
  depthScript,
  enqueueDeduplicatedScript,
  enqueueScript,
  heartbeatScript,
  type QueueKeys,
  queueKeys,
  redeliverScript,
} from "./scripts/message-queue.ts";

const logger = getLogger(["fedwork", "redis"]);

/**
 * A durable {@link MessageQueue} on Redis (standalone or Cluster), through
 * ioredis.
 *
 * Messages are stored as JSON text.  Every state change (enqueue, claim
 * with acknowledgement, heartbeat, redelivery) is one Lua script call, so
 * it is atomic and costs one round trip; `enqueueMany()` adds all its
 * messages in one call.  Listeners sleep until a pub/sub wake-up published
 * by the enqueue script, a timer for the next delayed message or lease
 * deadline, or at most `pollInterval`.  Listeners in the enqueuing process
 * (since 0.4.0) are woken directly once the enqueue's reply arrives, and
 * skip the pub/sub copy of that wake-up.
 *
 * A listener takes up to `concurrency + prefetch` messages per claim: the
 * prefetched ones wait in memory, leased, and start without a round trip
 * when a handler finishes; acknowledgements ride on the next claim.
 *
 * Delivery is at least once: a message is acknowledged after its handler
 * returns.  A message handed to a worker is leased for `leaseTime`; the
 * worker extends the lease every `heartbeatInterval` while the handler
 * runs, and a message whose worker died is handed out again once the lease
 * runs out.  A handler that throws leaves its message unacknowledged: it
 * is handed out again after `redeliveryDelay` (by default one `leaseTime`).
 *
 * Handlers get a `MessageRedelivery` as their second argument: its
 * `redeliver()` replaces the message with a new version and schedules it
 * after a delay, in one script call, without acknowledging it.  Its
 * `deliveryCount` (since 0.4.0) is how many times the message was handed
 * out since it was enqueued or last redelivered, this hand-out included,
 * counted by the claim script before the handler runs: a worker killed
 * mid-handler has still counted it, a handler that threw counts too, and a
 * prefetched message handed back unstarted when a listener stops does not.
 *
 * Messages sharing an `orderingKey` run one at a time, across all
 * processes, in the order they became ready (for messages without a delay,
 * the enqueue order).  A message being handed out again (its handler
 * threw, or it was redelivered) keeps its key held: later messages with
 * that key wait until it has been handled.
 *
 * Connections: one for commands and, once `listen()` is called, one in
 * subscriber mode for wake-ups.  See {@link RedisConnectionOptions} for
 * which connections the queue closes on disposal.
 *
 * @example
 * ```ts ignore
 * import { RedisMessageQueue } from "@fedwork/redis";
 *
 * await using queue = new RedisMessageQueue({
 *   url: "redis://127.0.0.1:6379",
 *   queue: "outbox",
 *   concurrency: 8,
 * });
 * const controller = new AbortController();
 * const listening = queue.listen((message) => {
 *   console.log(message);
 * }, { signal: controller.signal });
 * await queue.enqueue({ hello: "world" }, { orderingKey: "alice" });
 * controller.abort();
 * await listening;
 * ```
 * @since 0.1.0
 */
export class RedisMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * Always `false`: Fedwork's retry policy decides about failed messages
   * (the queue only hands out again a message whose handler threw).
   * @since 0.1.0
   */
  readonly nativeRetrial = false;

  /**
   * Always `true`: {@link RedisMessageQueue.enqueueDeduplicated} checks and
   * adds in one Lua script, so it is atomic across every process.
   * @since 0.2.0
   */
  readonly nativeDeduplication = true;

  /**
   * Always `true`: the claim script hands out ready messages highest
   * priority first (one ready list per priority; see
   * `MessageQueueEnqueueOptions.priority`).
   * @since 0.3.0
   */
  readonly nativePriority = true;

  /**
   * How many handlers one `listen()` call runs at once: the
   * `concurrency` option.  `listWorkers()` shows it for the workers that
   * listen to this queue.
   * @returns The resolved `concurrency` option.
   * @since 0.3.0
   */
  get concurrency(): number {
    return this.#options.concurrency;
  }

  readonly #options: ResolvedQueueOptions;
  readonly #given: RedisMessageQueueOptions;
  readonly #siblings: SiblingQueues<RedisMessageQueue> = new SiblingQueues(
    (channel) => this.#createSibling(channel),
    {
      assertOpen: () => {
        if (this.#closed) throw new RedisMessageQueueClosedError(this.#options.queue);
      },
    },
  );
  readonly #keys: QueueKeys;
  readonly #connections: RedisConnectionSource;
  #subscriber: RedisClient | undefined;
  readonly #wakeListeners = new Set<() => void>();
  #closed = false;
  /** Settles a running delivery when the queue is disposed. */
  readonly #runningDeliveries = new Set<() => void>();

  /**
   * Creates a queue instance; connections open lazily on first use.
   * @param options How to connect and the queue's options.
   * @throws {TypeError} When an option has the wrong type, or not exactly
   *                     one way to connect is given.
   * @throws {RangeError} When an option is out of range (e.g.
   *                      `leaseTime must be a positive duration`).
   * @since 0.1.0
   */
  constructor(options: RedisMessageQueueOptions);
  /**
   * Creates a queue instance as `@fedify/redis`'s
   * `new RedisMessageQueue(() => redis, options?)` does: a function first
   * becomes the `createClient` option (Fedwork calls it for each
   * connection it needs and closes what it returned on dispose, as Fedify
   * does), an ioredis client the `client` option (left open).  Fedify's
   * `pollInterval` means the same here; its `workerId`, `channelKey`,
   * `queueKey`, `lockKey` and `codec` are refused with what to use
   * instead.
   * @param client A function returning a new ioredis `Redis` or `Cluster`
   *               client, or an open client.
   * @param options The queue's other options.
   * @throws {TypeError} When the first argument is neither, or an option is
   *                     unknown or has the wrong type.
   * @throws {RangeError} When an option is out of range.
   * @since 0.4.0
   */
  constructor(
    client: (() => RedisClient) | RedisClient,
    options?: Omit<RedisMessageQueueOptions, keyof RedisConnectionOptions>,
  );
  constructor(
    first: RedisMessageQueueOptions | RedisClient | (() => RedisClient),
    second?: Omit<RedisMessageQueueOptions, keyof RedisConnectionOptions>,
  ) {
    const options = resolveConstructorArguments<RedisMessageQueueOptions>(
      first,
      second,
      "new RedisMessageQueue()",
      "new RedisMessageQueue(() => redis)",
    );
    assertKnownOptions(options, [
      "client",
      "createClient",
      "url",
      "redisOptions",
      "queue",
      "prefix",
      "leaseTime",
      "redeliveryDelay",
      "heartbeatInterval",
      "concurrency",
      "prefetch",
      "maxPrefetch",
      "pollInterval",
    ], { where: "new RedisMessageQueue()", hints: FEDIFY_REDIS_HINTS });
    this.#given = options;
    this.#options = resolveQueueOptions(options);
    this.#connections = new RedisConnectionSource(options, "RedisMessageQueue");
    this.#keys = queueKeys(this.#options.prefix, this.#options.queue);
  }

  /**
   * Adds a message.  Resolves once Redis has stored it; rejects when the
   * command fails (ioredis retries it across reconnects first, according
   * to its `maxRetriesPerRequest` option).
   * @param message A JSON-compatible value.
   * @param options The delay, ordering key and priority.
   * @throws {TypeError} When `delay` is not a duration or the message is
   *                     not JSON-serializable.
   * @throws {RangeError} When `delay` is negative or `priority` is out of
   *                     range.
   * @throws {RedisMessageQueueClosedError} After disposal.
   * @since 0.1.0
   */
  // deno-lint-ignore no-explicit-any
  async enqueue(message: any, options: MessageQueueEnqueueOptions = {}): Promise<void> {
    await this.#enqueue([message], options);
  }

  /**
   * Adds several messages in one script call: all of them or, when the
   * call fails, none.
   * @param messages JSON-compatible values.
   * @param options The delay, ordering key and priority, applied to every
   *                message.
   * @throws {TypeError} When `delay` is not a duration or a message is not
   *                     JSON-serializable.
   * @throws {RangeError} When `delay` is negative or `priority` is out of
   *                     range.
   * @throws {RedisMessageQueueClosedError} After disposal.
   * @since 0.1.0
   */
  // deno-lint-ignore no-explicit-any
  async enqueueMany(messages: readonly any[], options: MessageQueueEnqueueOptions = {}) {
    if (messages.length === 0) {
      if (options.delay != null) durationToMilliseconds(options.delay, "delay");
      return;
    }
    await this.#enqueue(messages, options);
  }

  /**
   * Adds a message unless a message enqueued with the same deduplication
   * key less than `deduplicationTtl` ago is still in the queue (waiting,
   * running or handed back for a retry).  One script call: the check and
   * the add are atomic, so concurrent calls from any number of processes
   * add one message.  The key is free again once that message is
   * acknowledged.
   * @param message A JSON-compatible value.
   * @param options The delay, ordering key, deduplication key and TTL.
   * @returns `true` when the message was added, `false` when the key was held.
   * @throws {TypeError} When an option has the wrong type or the message is
   *                     not JSON-serializable.
   * @throws {RangeError} When `delay` or `deduplicationTtl` is negative.
   * @throws {RedisMessageQueueClosedError} After disposal.
   * @since 0.2.0
   */
  async enqueueDeduplicated(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ): Promise<boolean> {
    const delayMs = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    const ttlMs = Math.max(
      1,
      durationToMilliseconds(options.deduplicationTtl, "deduplicationTtl"),
    );
    const orderingKey = options.orderingKey ?? "";
    if (typeof orderingKey !== "string") {
      throw new TypeError("The orderingKey option must be a string.");
    }
    const key: unknown = options.deduplicationKey;
    if (typeof key !== "string" || key === "") {
      throw new TypeError("The deduplicationKey option must be a non-empty string.");
    }
    const priority = checkMessagePriority(options.priority);
    const json = JSON.stringify(message);
    if (json === undefined) {
      throw new TypeError(
        `The message cannot be stored: it is not JSON-serializable (got ${typeof message}).`,
      );
    }
    const k = this.#keys;
    const redis = this.#redis();
    let added: unknown;
    try {
      added = await enqueueDeduplicatedScript.run(
        redis,
        [k.ready, k.delayed, k.msg, k.okey, k.seq],
        [k.base, delayMs, orderingKey, key, ttlMs, json, priority, LOCAL_WAKE_ORIGIN],
      );
    } catch (error) {
      // The script may have run: see local-wake.ts.
      wakeLocalListeners(k.wake);
      throw error;
    }
    if (added === 1 && delayMs === 0) wakeLocalListeners(k.wake);
    return added === 1;
  }

  async #enqueue(messages: readonly unknown[], options: MessageQueueEnqueueOptions) {
    const delayMs = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    const orderingKey = options.orderingKey ?? "";
    if (typeof orderingKey !== "string") {
      throw new TypeError("The orderingKey option must be a string.");
    }
    const priority = checkMessagePriority(options.priority);
    const payloads = messages.map((message, index) => {
      const json = JSON.stringify(message);
      if (json === undefined) {
        throw new TypeError(
          `Message ${index} cannot be stored: it is not JSON-serializable (got ${typeof message}).`,
        );
      }
      return json;
    });
    const redis = this.#redis();
    const k = this.#keys;
    // Listeners of this process wake here rather than on the pub/sub
    // copy; after the reply (or a failure, whose script may still have
    // run), never before: see local-wake.ts.
    let readied: unknown;
    try {
      readied = await enqueueScript.run(redis, [k.ready, k.delayed, k.msg, k.okey, k.seq], [
        k.base,
        delayMs,
        orderingKey,
        priority,
        LOCAL_WAKE_ORIGIN,
        ...payloads,
      ]);
    } catch (error) {
      wakeLocalListeners(k.wake);
      throw error;
    }
    if (Number(readied) > 0) wakeLocalListeners(k.wake);
  }

  /**
   * Handles messages until `options.signal` aborts, running up to
   * `concurrency` handlers at once, on the queue kit's lease listener
   * (`runLeaseListener()` from `@fedwork/core/queue-kit`).  Each claim
   * takes up to `concurrency + prefetch` messages; the prefetched ones
   * wait leased in memory, start as soon as a handler finishes, and are
   * handed back to the front of the line when the listener stops.
   * Acknowledgements ride on the next claim.  A handler that throws is
   * logged under `["fedwork", "redis"]` and its message handed out again
   * after `redeliveryDelay`.  Each handler gets a `MessageRedelivery` as its
   * second argument; its `redeliver()` rejects with
   * {@link RedisLeaseLostError} when the lease was lost.  Lost connections
   * and failed commands are logged and retried with backoff; listening
   * stops on its own only when the instance is disposed, rejecting with
   * {@link RedisMessageQueueClosedError} without waiting for running
   * handlers (their messages are handed out again after their lease).
   * @param handler Processes one message.
   * @param options The abort signal.
   * @returns Resolves after the signal aborts and running handlers finish.
   * @throws {RedisMessageQueueClosedError} When the instance is or gets
   *                                       disposed.
   * @since 0.1.0
   */
  async listen(
    handler: MessageQueueHandler,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    this.#redis();
    if (options.signal?.aborted) return;
    this.#subscribe();
    const opts = this.#options;
    // A disposed queue can acknowledge nothing: its running deliveries
    // settle at once (their leases run out) and listen() rejects, as
    // documented, instead of waiting for handlers that may never finish.
    const abandonable: MessageQueueHandler = (message, redelivery) =>
      new Promise((resolve, reject) => {
        const abandon = () => reject(new RedisMessageQueueClosedError(opts.queue));
        this.#runningDeliveries.add(abandon);
        Promise.resolve()
          .then(() => handler(message, redelivery))
          .then(resolve, reject)
          .finally(() => this.#runningDeliveries.delete(abandon));
      });
    await runLeaseListener(
      this.#engine(),
      abandonable,
      {
        concurrency: opts.concurrency,
        prefetch: opts.prefetch,
        maxPrefetch: opts.maxPrefetch,
        batchSize: options.batchSize,
        heartbeatMs: opts.heartbeatMs,
        pollMs: opts.pollMs,
        handBackDelayMs: opts.redeliveryDelayMs,
        queueName: `Redis queue ${JSON.stringify(opts.queue)}`,
        signal: options.signal,
        logger,
      },
    );
    if (this.#closed && !options.signal?.aborted) {
      throw new RedisMessageQueueClosedError(opts.queue);
    }
  }

  /** The Redis side of one listener: every call is one script call. */
  #engine(): LeaseEngine<RedisLeasedMessage> {
    const keys = this.#keys;
    const opts = this.#options;
    const claimKeys = [
      keys.ready,
      keys.delayed,
      keys.inflight,
      keys.msg,
      keys.okey,
      keys.delivery,
      keys.reset,
    ];
    const claim = async (
      count: number,
      acks: readonly RedisLeasedMessage[],
      handBacks: readonly RedisLeasedMessage[],
      releases: readonly RedisLeasedMessage[],
    ): Promise<LeaseClaimResult<RedisLeasedMessage>> => {
      const unkeyed = acks.filter((message) => !message.keyed);
      const args: (string | number)[] = [
        keys.base,
        opts.leaseMs,
        count,
        opts.redeliveryDelayMs,
        handBacks.length,
        releases.length,
        unkeyed.length,
      ];
      for (const { id, token } of handBacks) args.push(id, token);
      for (const { id, token } of releases) args.push(id, token);
      for (const { id, token } of unkeyed) args.push(id, token);
      for (const { id, token, keyed } of acks) if (keyed) args.push(id, token);
      const reply = await claimScript.run(this.#redis(), claimKeys, args);
      return parseClaim(reply as (string | number)[]);
    };
    return {
      claim: ({ count, acks, handBacks }) => claim(count, acks, handBacks, []),
      release: async (messages) => {
        await claim(0, [], [], messages);
      },
      extendLeases: async (messages) => {
        // Leases of a disposed queue run out: that is how its messages
        // come back.
        if (this.#closed) return;
        const args: (string | number)[] = [opts.leaseMs];
        for (const { id, token } of messages) args.push(id, token);
        await heartbeatScript.run(this.#redis(), [keys.inflight, keys.delivery], args);
      },
      redeliver: async (message, payload, delayMs) => {
        const json = JSON.stringify(payload);
        if (json === undefined) {
          throw new TypeError(
            `The message to redeliver is not JSON-serializable (got ${typeof payload}).`,
          );
        }
        const updated = await redeliverScript.run(
          this.#redis(),
          [keys.delayed, keys.inflight, keys.msg, keys.delivery, keys.reset],
          [message.id, message.token, delayMs, json],
        );
        if (updated !== 1) throw new RedisLeaseLostError(opts.queue, message.id);
      },
      decode: (message) => JSON.parse(message.json),
      subscribe: (wake) => {
        this.#wakeListeners.add(wake);
        const removeLocal = addLocalWakeListener(keys.wake, wake);
        return () => {
          this.#wakeListeners.delete(wake);
          removeLocal();
        };
      },
    };
  }

  /**
   * Counts the messages of the queue: `queued` is every message not yet
   * acknowledged, `delayed` those waiting for their delay, `ready` the
   * rest except those in flight (with a live lease).
   * @returns The counts.
   * @throws {RedisMessageQueueClosedError} After disposal.
   * @since 0.1.0
   */
  async getDepth(): Promise<MessageQueueDepth> {
    const k = this.#keys;
    const [queued, delayed, inFlight] = await depthScript.run(
      this.#redis(),
      [k.msg, k.delayed, k.inflight],
      [],
    ) as number[];
    return { queued, ready: Math.max(queued - delayed - inFlight, 0), delayed };
  }

  /**
   * Returns a sibling queue for capability routing: the same connection
   * options, prefix and settings, under the queue name
   * `<queue>:<channel>`, so its keys are `{<prefix>:<queue>:<channel>}:…`.
   * The same channel gives the same sibling; it is disposed of with this
   * queue.
   * @param channel Lowercase letters, digits and underscores.
   * @returns The sibling.
   * @throws {TypeError} When the channel is malformed.
   * @throws {RedisMessageQueueClosedError} After disposal.
   * @since 0.2.0
   */
  derive(channel: string): RedisMessageQueue {
    return this.#siblings.derive(channel);
  }

  #createSibling(channel: string): RedisMessageQueue {
    return new RedisMessageQueue({
      ...this.#given,
      queue: `${this.#options.queue}:${channel}`,
    });
  }

  /**
   * Closes the connections this instance opened; a `client` passed in
   * stays open.  Data in Redis is kept.  Call it after the listeners have
   * stopped.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#siblings.disposeAll();
    for (const abandon of this.#runningDeliveries) abandon();
    this.#subscriber = undefined;
    // Listeners still running notice the disposal and stop.
    for (const wake of this.#wakeListeners) wake();
    await this.#connections.closeAll();
  }

  #redis(): RedisClient {
    if (this.#closed) throw new RedisMessageQueueClosedError(this.#options.queue);
    return this.#connections.main;
  }

  /** Opens the subscriber connection that receives wake-ups, once. */
  #subscribe(): void {
    if (this.#subscriber != null) return;
    const subscriber = this.#connections.open();
    this.#subscriber = subscriber;
    const wakeAll = () => {
      for (const wake of this.#wakeListeners) wake();
    };
    subscriber.on("message", (_channel: string, payload: string) => {
      // This process's enqueues woke its listeners directly already.
      if (!isLocalWakeOrigin(payload)) wakeAll();
    });
    // Wake-ups published while the connection was down are lost; look at
    // the queue again whenever it (re)connects.
    subscriber.on("ready", wakeAll);
    subscriber.on("error", (error: unknown) => {
      logger.warn("The wake-up connection of queue {queue} failed: {error}", {
        queue: this.#options.queue,
        error,
      });
    });
    subscriber.subscribe(this.#keys.wake).catch((error: unknown) => {
      if (this.#closed) return;
      logger.warn(
        "Failed to subscribe to wake-ups of queue {queue}; relying on polling: {error}",
        { queue: this.#options.queue, error },
      );
    });
  }
}

/** A message handed out by the claim script. */
interface RedisLeasedMessage extends LeasedMessage {
  readonly id: string;
  /** The JSON text. */
  readonly json: string;
  /** Which hand-out of the message this is: proves the lease is ours. */
  readonly token: string;
  /** Whether the message has an ordering key (its acknowledgement advances the key). */
  readonly keyed: boolean;
  /** Hand-outs since the last redelivery, this one included. */
  readonly deliveryCount: number;
}

function parseClaim(reply: (string | number)[]): LeaseClaimResult<RedisLeasedMessage> {
  const messages: RedisLeasedMessage[] = [];
  for (let i = 2; i < reply.length; i += 5) {
    messages.push({
      id: String(reply[i]),
      json: String(reply[i + 1]),
      token: String(reply[i + 2]),
      keyed: reply[i + 3] === 1,
      // At least 1: a reset written by hand (or by a broken script) must
      // not hide a hand-out.
      deliveryCount: Math.max(1, Number(reply[i + 4]) || 1),
    });
  }
  const waitMs = Number(reply[0]);
  return { messages, waitMs: waitMs < 0 ? undefined : waitMs };
}
