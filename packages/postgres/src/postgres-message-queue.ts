import {
  type DurationInput,
  durationToMilliseconds,
  type MessageQueue,
  type MessageQueueDeduplicatedEnqueueOptions,
  type MessageQueueDepth,
  type MessageQueueEnqueueOptions,
  type MessageQueueHandler,
  type MessageQueueListenOptions,
  type MessageRedelivery,
  type MessageRedeliveryOptions,
} from "@fedwork/core";
import { getLogger } from "@logtape/logtape";
import type { ListenMeta, Sql } from "postgres";
import { resolveClient } from "./client.ts";
import { PostgresClosedError } from "./errors.ts";
import { qualifiedName, validateIdentifier } from "./identifiers.ts";
import { buildMessageQueueStatements, type MessageQueueStatements } from "./message-queue-sql.ts";
import { encodeJson, positiveDurationOption, positiveIntegerOption } from "./options.ts";
import { createTables } from "./table-setup.ts";
import { Wakeup } from "./wakeup.ts";

const logger = getLogger(["fedwork", "postgres"]);

// Room for the "_due_idx"/"_key_idx" suffixes of the derived index names.
const MAX_TABLE_NAME_LENGTH = 54;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_INTERVAL_MS = 5_000;
const MAX_BACKOFF_MS = 5_000;
const PREPARED = { prepare: true } as const;

/**
 * Options for {@link PostgresMessageQueue}.
 * @since 0.1.0
 */
export interface PostgresMessageQueueOptions {
  /**
   * The table holding the messages.  A plain SQL name (letters, digits,
   * underscores; at most 54 characters).  `"fedwork_message_queue"` by
   * default.
   */
  readonly tableName?: string;
  /** The schema of the table; the connection's search path by default. */
  readonly schema?: string;
  /**
   * The LISTEN/NOTIFY channel that wakes listeners.  The table name by
   * default (`<schema>_<table>` when a schema is given).
   */
  readonly channelName?: string;
  /**
   * How long a claimed message stays invisible to other workers.  A live
   * worker renews the lease of each running handler every third of this
   * time; when a worker dies, its messages are handed out again once their
   * lease runs out.  30 seconds by default.
   */
  readonly leaseTime?: DurationInput;
  /**
   * How often an idle listener checks the table even without a
   * notification, in case one was missed (e.g. while the listening
   * connection was reconnecting).  5 seconds by default.
   */
  readonly pollInterval?: DurationInput;
  /** How many handlers each `listen()` call runs at once.  1 by default. */
  readonly concurrency?: number;
  /**
   * Set to `true` when the table already exists (e.g. created by a
   * migration) to skip `CREATE TABLE IF NOT EXISTS` on first use.  `false`
   * by default.
   */
  readonly initialized?: boolean;
}

interface ClaimedRow {
  readonly id: string;
  readonly message: string;
  readonly keyed: boolean;
}

/** One hand-out of a claimed row to the handler. */
interface Delivery {
  readonly id: string;
  /** Whether the row's lease is still this delivery's (heartbeats renew it). */
  leased: boolean;
  /** Whether the handler has returned or thrown. */
  settled: boolean;
  /**
   * Set once `redeliver()` was called: resolves to whether the new version
   * was stored.  Never rejects.
   */
  redelivered?: Promise<boolean>;
}

interface Acknowledgements {
  /** Handled rows with an ordering key: deleted with a notification. */
  readonly keyed: string[];
  /** Handled rows without one: deleted along with the next claim. */
  readonly plain: string[];
}

/**
 * A durable {@link MessageQueue} on PostgreSQL, using the `postgres`
 * (postgres.js) client.
 *
 * Messages live in one table (created on first use).  Listeners claim due
 * rows with `FOR UPDATE SKIP LOCKED` in a single statement, handlers run
 * under a lease that a heartbeat renews, and a message is deleted only after
 * its handler returns.  A message whose handler throws is handed out again
 * after one {@link PostgresMessageQueueOptions.leaseTime}, and one whose
 * worker died once its lease runs out.  Handlers get a `MessageRedelivery`
 * as their second argument, which stores a new version of the message in
 * its row (keeping its ordering key held) and hands it out again after a
 * delay.  Listeners are woken by `LISTEN`/`NOTIFY` on enqueue,
 * by timers for delayed messages and expiring leases, and by a fallback
 * poll.  Messages that share an `orderingKey` run one at a time, in enqueue
 * order, across all processes; a delayed message holds back later messages
 * with its key until it has run.
 *
 * Pass a connection URL to let the queue own its client (closed by
 * `[Symbol.asyncDispose]()`), or a postgres.js `Sql` you own (left open).
 *
 * @example
 * ```ts
 * import { PostgresMessageQueue } from "@fedwork/postgres";
 *
 * await using queue = new PostgresMessageQueue("postgres://localhost/app", {
 *   concurrency: 4,
 * });
 * const controller = new AbortController();
 * const listening = queue.listen((message) => {
 *   console.log(message);
 * }, { signal: controller.signal });
 * await queue.enqueue({ hello: "world" });
 * controller.abort();
 * await listening;
 * ```
 * @since 0.1.0
 */
export class PostgresMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * Always `false`: Fedwork's retry policy decides about failed messages
   * (through the `MessageRedelivery` handed to the handler); the queue only
   * hands out again, after a lease, a message whose handler threw.
   * @since 0.1.0
   */
  readonly nativeRetrial = false;

  /**
   * Always `true`: {@link PostgresMessageQueue.enqueueDeduplicated} relies on
   * a unique index on the deduplication key, so it is atomic across every
   * process.
   * @since 0.2.0
   */
  readonly nativeDeduplication = true;

  readonly #sql: Sql;
  readonly #ownsClient: boolean;
  readonly #statements: MessageQueueStatements;
  readonly #lockName: string;
  readonly #channel: string;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #concurrency: number;
  #initialized: Promise<void> | undefined;
  #closed = false;
  /** The running listen() loops, woken and awaited on dispose. */
  readonly #loops = new Map<Promise<void>, Wakeup>();

  /**
   * Creates a queue.  Nothing is sent to PostgreSQL until first use.
   * @param client A postgres.js `Sql` (left open on dispose) or a connection
   *               URL (the queue creates its own client and closes it).
   * @param options The table, lease, polling and concurrency options.
   * @throws {TypeError} When a name option is not a plain SQL name.
   * @throws {RangeError} When a duration or number option is out of range.
   * @since 0.1.0
   */
  constructor(client: Sql | string | URL, options: PostgresMessageQueueOptions = {}) {
    const table = validateIdentifier(
      options.tableName ?? "fedwork_message_queue",
      "tableName",
      MAX_TABLE_NAME_LENGTH,
    );
    const schema = options.schema === undefined
      ? undefined
      : validateIdentifier(options.schema, "schema");
    this.#channel = validateIdentifier(
      options.channelName ?? (schema == null ? table : `${schema}_${table}`),
      "channelName",
    );
    this.#leaseMs = positiveDurationOption(options.leaseTime, "leaseTime", DEFAULT_LEASE_MS);
    this.#pollIntervalMs = positiveDurationOption(
      options.pollInterval,
      "pollInterval",
      DEFAULT_POLL_INTERVAL_MS,
    );
    this.#concurrency = positiveIntegerOption(options.concurrency, "concurrency", 1);
    this.#statements = buildMessageQueueStatements(table, schema);
    this.#lockName = qualifiedName(table, schema);
    if (options.initialized === true) this.#initialized = Promise.resolve();
    ({ sql: this.#sql, ownsClient: this.#ownsClient } = resolveClient(client));
  }

  /**
   * Adds a message.  Resolves once PostgreSQL has committed it.
   * @param message A JSON-compatible value.
   * @param options The delay and ordering key.
   * @returns Resolves when the message is stored.
   * @throws {TypeError} When the message is not JSON-compatible or the delay
   *                     is not a duration.
   * @throws {RangeError} When the delay is negative.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.1.0
   */
  async enqueue(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    const { delayMs, orderingKey } = this.#checkEnqueue(options);
    const json = encodeJson(message, "message");
    await this.#initialize();
    await this.#sql.unsafe(
      this.#statements.enqueue,
      [json, orderingKey, delayMs, this.#channel],
      PREPARED,
    );
  }

  /**
   * Adds several messages in one statement: all of them or none.
   * @param messages JSON-compatible values, handed out in this order.
   * @param options The delay and ordering key, applied to every message.
   * @returns Resolves when the messages are stored.
   * @throws {TypeError} When a message is not JSON-compatible.
   * @throws {RangeError} When the delay is negative.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.1.0
   */
  async enqueueMany(
    // deno-lint-ignore no-explicit-any
    messages: readonly any[],
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    const { delayMs, orderingKey } = this.#checkEnqueue(options);
    const json = messages.map((message, i) => encodeJson(message, `message at index ${i}`));
    if (json.length === 0) return;
    await this.#initialize();
    await this.#sql.unsafe(
      this.#statements.enqueueMany,
      [json, orderingKey, delayMs, this.#channel],
      PREPARED,
    );
  }

  /**
   * Adds a message unless a row enqueued with the same deduplication key
   * less than `deduplicationTtl` ago is still in the table (waiting,
   * running or waiting for a retry in place).  A unique index on the key
   * makes concurrent calls from any number of processes add one message:
   * the others wait for the first transaction and then add nothing.  The
   * key is free again once that row is acknowledged.
   * @param message A JSON-compatible value.
   * @param options The delay, ordering key, deduplication key and TTL.
   * @returns `true` when the message was added, `false` when the key was held.
   * @throws {TypeError} When the message is not JSON-compatible or an
   *                     option has the wrong type.
   * @throws {RangeError} When `delay` or `deduplicationTtl` is negative.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.2.0
   */
  async enqueueDeduplicated(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ): Promise<boolean> {
    const { delayMs, orderingKey } = this.#checkEnqueue(options);
    const ttlMs = durationToMilliseconds(options.deduplicationTtl, "deduplicationTtl");
    const key: unknown = options.deduplicationKey;
    if (typeof key !== "string" || key === "") {
      throw new TypeError("The deduplicationKey option must be a non-empty string.");
    }
    const json = encodeJson(message, "message");
    await this.#initialize();
    return await this.#sql.begin(async (tx) => {
      await tx.unsafe(this.#statements.expireDeduplication, [key], PREPARED);
      const rows = await tx.unsafe(
        this.#statements.enqueueDeduplicated,
        [json, orderingKey, delayMs, this.#channel, key, ttlMs],
        PREPARED,
      );
      return rows.length > 0;
    });
  }

  /**
   * Counts the messages in the table.  In-flight messages count as queued
   * but neither ready nor delayed.
   * @returns The depth.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.1.0
   */
  async getDepth(): Promise<MessageQueueDepth> {
    this.#checkOpen();
    await this.#initialize();
    const [row] = await this.#sql.unsafe(this.#statements.depth, [], PREPARED);
    return { queued: row.queued, ready: row.ready, delayed: row.delayed };
  }

  /**
   * Hands messages to `handler`, up to `concurrency` at once, until the
   * signal aborts; then waits for the running handlers and resolves.  A
   * lost connection or failed query is logged and retried with backoff, so
   * the listener resumes when PostgreSQL is back.
   * @param handler Processes one message.  A message is deleted once its
   *                handler returns.  When the handler throws, the error is
   *                logged and the message is handed out again after one
   *                lease.  The handler's second argument, a
   *                `MessageRedelivery`, stores a new version of the message
   *                and hands it out again after a delay; the message is
   *                then not deleted when the handler returns.
   * @param options The abort signal.
   * @returns Resolves after the signal aborted and handlers finished.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.1.0
   */
  listen(
    handler: MessageQueueHandler,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    if (this.#closed) return Promise.reject(new PostgresClosedError("PostgresMessageQueue"));
    const signal = options.signal;
    if (signal?.aborted) return Promise.resolve();
    const wakeup = new Wakeup();
    const loop = this.#listenLoop(handler, wakeup, signal);
    this.#loops.set(loop, wakeup);
    return loop.finally(() => this.#loops.delete(loop));
  }

  async #listenLoop(
    handler: MessageQueueHandler,
    wakeup: Wakeup,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const owner = crypto.randomUUID();
    const running = new Map<Delivery, Promise<void>>();
    const acks: Acknowledgements = { keyed: [], plain: [] };
    const onAbort = () => wakeup.wake();
    signal?.addEventListener("abort", onAbort);
    /** The rows whose leases this listener still holds for a running handler. */
    const leasedIds = (): string[] => {
      const ids: string[] = [];
      for (const delivery of running.keys()) if (delivery.leased) ids.push(delivery.id);
      return ids;
    };
    const heartbeat = setInterval(() => {
      const ids = leasedIds();
      if (ids.length > 0) void this.#heartbeat(ids, owner);
    }, Math.max(1, Math.floor(this.#leaseMs / 3)));
    const start = (row: ClaimedRow) => {
      const delivery: Delivery = { id: row.id, leased: true, settled: false };
      const redelivery: MessageRedelivery = {
        redeliver: (message: unknown, options: MessageRedeliveryOptions) =>
          this.#redeliver(delivery, owner, message, options),
      };
      const done = (async () => {
        let failure: { error: unknown } | undefined;
        try {
          // Deferred by a microtask so that a handler throwing synchronously
          // still settles after `running` has recorded it.
          await Promise.resolve().then(() => handler(JSON.parse(row.message), redelivery));
        } catch (error) {
          failure = { error };
        }
        delivery.settled = true;
        // A handler may return without awaiting its redeliver() call.
        const stored = delivery.redelivered === undefined ? undefined : await delivery.redelivered;
        const messageId = row.id;
        if (stored === true) {
          if (failure != null) {
            logger.error(
              "The handler failed for message {messageId} after redelivering it; " +
                "the new version stays queued: {error}",
              { messageId, error: failure.error },
            );
          }
        } else if (failure == null && stored === undefined) {
          (row.keyed ? acks.keyed : acks.plain).push(row.id);
        } else {
          // Not handled: the message comes back as it was after a lease.
          delivery.leased = false;
          if (failure != null) {
            logger.error(
              "The handler failed for message {messageId}; it will be handed out again " +
                "in {retryMs} ms: {error}",
              { messageId, retryMs: this.#leaseMs, error: failure.error },
            );
          } else {
            logger.warn(
              "The handler of message {messageId} returned although its redelivery failed; " +
                "it will be handed out again in {retryMs} ms.",
              { messageId, retryMs: this.#leaseMs },
            );
          }
          await this.#release(row.id, owner);
        }
        running.delete(delivery);
        wakeup.wake();
      })();
      running.set(delivery, done);
    };
    let subscription: ListenMeta | undefined;
    let failures = 0;
    const stopped = () => signal?.aborted === true || this.#closed;
    try {
      while (!stopped()) {
        let waitMs = this.#pollIntervalMs;
        try {
          subscription ??= await this.#sql.listen(
            this.#channel,
            () => wakeup.wake(),
            // Also called after postgres.js re-listens on a new connection:
            // anything enqueued meanwhile is picked up at once.
            () => wakeup.wake(),
          );
          await this.#initialize();
          await this.#flushAcks(acks.keyed);
          const free = this.#concurrency - running.size;
          if (free === 0) await this.#flushAcks(acks.plain);
          if (free > 0) {
            const plain = acks.plain.splice(0);
            let rows: ClaimedRow[];
            try {
              rows = await this.#sql.unsafe<ClaimedRow[]>(
                plain.length > 0 ? this.#statements.acknowledgeAndClaim : this.#statements.claim,
                plain.length > 0
                  ? [free, this.#leaseMs, owner, plain]
                  : [free, this.#leaseMs, owner],
                PREPARED,
              );
            } catch (error) {
              acks.plain.unshift(...plain);
              throw error;
            }
            for (const row of rows) start(row);
            if (rows.length < free) {
              // Nothing else is claimable now: sleep until the earliest
              // delayed message is due or a lease that no running handler
              // of this listener renews runs out.
              const [next] = await this.#sql.unsafe(
                this.#statements.nextWake,
                [leasedIds()],
                PREPARED,
              );
              if (next.wait_ms != null) waitMs = Math.min(waitMs, Math.max(1, next.wait_ms));
            }
          }
          if (failures > 0) logger.info("Listening on PostgreSQL again.");
          failures = 0;
        } catch (error) {
          if (stopped()) break;
          failures++;
          waitMs = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(failures - 1, 10));
          logger.warn(
            "Polling PostgreSQL failed (attempt {attempt}); retrying in {waitMs} ms: {error}",
            { attempt: failures, waitMs, error },
          );
        }
        if (stopped()) break;
        await wakeup.wait(waitMs);
      }
      while (running.size > 0) await Promise.all(running.values());
      await this.#flushAcksOnExit([...acks.keyed, ...acks.plain]);
    } finally {
      clearInterval(heartbeat);
      signal?.removeEventListener("abort", onAbort);
      await subscription?.unlisten().catch((error) => {
        logger.debug("UNLISTEN failed: {error}", { error });
      });
    }
  }

  async #flushAcks(acks: string[]): Promise<void> {
    if (acks.length === 0) return;
    const ids = acks.splice(0);
    try {
      await this.#sql.unsafe(this.#statements.acknowledge, [ids, this.#channel], PREPARED);
    } catch (error) {
      // Kept for the next attempt; if the worker dies first, the lease runs
      // out and the message is delivered again (at least once).
      acks.unshift(...ids);
      throw error;
    }
  }

  async #flushAcksOnExit(acks: string[]): Promise<void> {
    for (let attempt = 1; acks.length > 0; attempt++) {
      try {
        await this.#flushAcks(acks);
      } catch (error) {
        if (attempt >= 3) {
          logger.error(
            "Could not delete {count} handled messages; they will be delivered again " +
              "after their lease: {error}",
            { count: acks.length, error },
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }

  /**
   * Stores a new version of a delivered message and releases its lease, so
   * that it is handed out again after the delay; the row keeps its id and
   * so its place in its ordering key.
   */
  #redeliver(
    delivery: Delivery,
    owner: string,
    message: unknown,
    options: MessageRedeliveryOptions,
  ): Promise<void> {
    let json: string;
    let delayMs: number;
    try {
      if (delivery.redelivered !== undefined) {
        throw new TypeError(
          `redeliver() was already called for message ${delivery.id}; ` +
            "call it at most once per delivery.",
        );
      }
      if (delivery.settled) {
        throw new TypeError(
          `redeliver() was called after the handler of message ${delivery.id} had settled; ` +
            "call it (and await it) before the handler returns.",
        );
      }
      delayMs = durationToMilliseconds(options?.delay, "delay");
      json = encodeJson(message, "redelivered message");
    } catch (error) {
      return Promise.reject(error);
    }
    const storing = (async () => {
      const rows = await this.#sql.unsafe(
        this.#statements.redeliver,
        [delivery.id, json, delayMs, owner, this.#channel],
        PREPARED,
      );
      if (rows.length === 0) {
        throw new Error(
          `Message ${delivery.id} was not redelivered: its lease ran out and another worker ` +
            "took it over.",
        );
      }
      delivery.leased = false;
    })();
    delivery.redelivered = storing.then(() => true, () => false);
    return storing;
  }

  /**
   * Releases the lease of a message whose handler failed, making it due
   * again after one lease.  When this fails, the lease runs out instead.
   */
  async #release(id: string, owner: string): Promise<void> {
    try {
      await this.#sql.unsafe(
        this.#statements.redeliver,
        [id, null, this.#leaseMs, owner, this.#channel],
        PREPARED,
      );
    } catch (error) {
      logger.warn(
        "Releasing message {messageId} failed; it will be handed out again when its " +
          "lease runs out: {error}",
        { messageId: id, error },
      );
    }
  }

  async #heartbeat(ids: string[], owner: string): Promise<void> {
    try {
      await this.#sql.unsafe(this.#statements.heartbeat, [ids, this.#leaseMs, owner], PREPARED);
    } catch (error) {
      logger.warn("Renewing the lease of {count} running messages failed: {error}", {
        count: ids.length,
        error,
      });
    }
  }

  #checkOpen(): void {
    if (this.#closed) throw new PostgresClosedError("PostgresMessageQueue");
  }

  #checkEnqueue(
    options: MessageQueueEnqueueOptions,
  ): { delayMs: number; orderingKey: string | null } {
    this.#checkOpen();
    const delayMs = options.delay === undefined
      ? 0
      : durationToMilliseconds(options.delay, "delay");
    const orderingKey = options.orderingKey ?? null;
    if (orderingKey !== null && typeof orderingKey !== "string") {
      throw new TypeError(`orderingKey must be a string; got ${typeof orderingKey}.`);
    }
    return { delayMs, orderingKey };
  }

  #initialize(): Promise<void> {
    this.#initialized ??= createTables(this.#sql, this.#lockName, this.#statements.create)
      .catch((error) => {
        this.#initialized = undefined;
        throw error;
      });
    return this.#initialized;
  }

  /**
   * Creates the table and its indexes if they do not exist yet.  Called
   * automatically on first use; call it from a migration script to create
   * the table up front.
   * @returns Resolves when the table exists.
   * @since 0.1.0
   */
  initialize(): Promise<void> {
    this.#checkOpen();
    return this.#initialize();
  }

  /**
   * Drops the table and every message in it.
   * @returns Resolves when the table is gone.
   * @since 0.1.0
   */
  async drop(): Promise<void> {
    this.#checkOpen();
    await this.#sql.unsafe(this.#statements.drop);
    this.#initialized = undefined;
  }

  /**
   * Stops the running `listen()` loops (waiting for their handlers) and
   * closes the client if the queue created it.  Data is kept.
   * @returns Resolves when everything is closed.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const wakeup of this.#loops.values()) wakeup.wake();
    await Promise.all(this.#loops.keys());
    if (this.#ownsClient) await this.#sql.end({ timeout: 5 });
  }
}
