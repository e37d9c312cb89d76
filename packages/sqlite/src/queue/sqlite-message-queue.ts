import {
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
import {
  configureConnection,
  openSqliteDatabase,
  runImmediateTransaction,
  type SqliteDatabase,
} from "../database/driver.ts";
import { SqliteClosedError } from "../database/errors.ts";
import { notifyWakeup, subscribeWakeup, wakeupChannel } from "./local-wakeup.ts";
import {
  type ResolvedQueueOptions,
  resolveQueueOptions,
  type SqliteMessageQueueOptions,
} from "./options.ts";
import {
  migrateDeduplicationColumns,
  prepareQueueStatements,
  queueSchemaSql,
  type QueueStatements,
} from "./schema.ts";

const logger = getLogger(["fedwork", "sqlite"]);

// After a failed claim the listener waits 100 ms, doubling up to this.
const MAX_RETRY_BACKOFF_MS = 30_000;

interface Connection {
  readonly database: SqliteDatabase;
  readonly statements: QueueStatements;
  /** The connection's current `PRAGMA synchronous` setting. */
  synchronous: Synchronous;
}

// Enqueues commit with synchronous=FULL: the WAL is flushed to disk before
// enqueue() resolves, so a message survives even a power failure.  Claims,
// lease extensions, redeliveries and deletions commit with NORMAL (no
// flush): losing one of those to a power failure only means a message (at
// worst its previous version) is handed out again, which at-least-once
// delivery allows, and the next FULL commit flushes them too.  Either setting survives a crash of the process itself.
type Synchronous = "FULL" | "NORMAL";

function setSynchronous(connection: Connection, mode: Synchronous): void {
  if (connection.synchronous === mode) return;
  connection.database.exec(`PRAGMA synchronous = ${mode}`);
  connection.synchronous = mode;
}

interface ClaimedRow {
  readonly id: number;
  readonly message: string;
  readonly ready_at: number;
}

/** One hand-out of a claimed row to the handler. */
interface Delivery {
  readonly id: number;
  /** Whether the row's lease is still this delivery's (heartbeats renew it). */
  leased: boolean;
  /** Whether the handler has returned or thrown. */
  settled: boolean;
  /** Set once `redeliver()` was called: whether the new version was stored. */
  redelivered?: boolean;
}

/**
 * A durable {@link MessageQueue} in a SQLite database file, on the
 * runtime's built-in SQLite (`node:sqlite` on Node.js and Deno, `bun:sqlite`
 * on Bun).  Several processes on one machine can share the file: claims run
 * in `BEGIN IMMEDIATE` transactions under SQLite's single write lock, and
 * a claimed message is leased (see
 * {@link SqliteMessageQueueOptions.leaseTime}) so that the message of a
 * crashed worker is handed out again.
 *
 * Pickup: enqueues from the same process wake its listeners at once, and
 * delays and expired leases wake them with a timer; enqueues from other
 * processes are found by polling every
 * {@link SqliteMessageQueueOptions.pollInterval} (1 s by default), because
 * SQLite cannot notify across processes.
 *
 * A handler that throws does not lose its message: the message is handed
 * out again after one {@link SqliteMessageQueueOptions.leaseTime}.  Handlers
 * get a `MessageRedelivery` as their second argument, which stores a new
 * version of the message in place (keeping its ordering key held) and
 * hands it out again after a delay.
 *
 * SQLite calls are synchronous and block the event loop while they run;
 * every statement is prepared once and kept short.
 *
 * The queue opens its own connection on first use and
 * `[Symbol.asyncDispose]()` closes it.
 *
 * @example
 * ```ts
 * import { SqliteMessageQueue } from "@fedwork/sqlite";
 *
 * await using queue = new SqliteMessageQueue({ path: "fedwork.sqlite" });
 * const controller = new AbortController();
 * const listening = queue.listen((message) => {
 *   console.log(message);
 *   controller.abort();
 * }, { signal: controller.signal });
 * await queue.enqueue({ hello: "world" });
 * await listening;
 * ```
 * @since 0.1.0
 */
export class SqliteMessageQueue implements MessageQueue, AsyncDisposable {
  /**
   * Always `false`: Fedwork's retry policy decides about failed messages
   * (through the `MessageRedelivery` handed to the handler); the queue only
   * hands out again, after a lease, a message whose handler threw.
   * @since 0.1.0
   */
  readonly nativeRetrial = false;

  /**
   * Always `true`: {@link SqliteMessageQueue.enqueueDeduplicated} checks and
   * inserts in one `BEGIN IMMEDIATE` transaction, under SQLite's write lock,
   * so it is atomic across every process sharing the file.
   * @since 0.2.0
   */
  readonly nativeDeduplication = true;

  readonly #options: ResolvedQueueOptions;
  readonly #channel: string;
  #connection: Promise<Connection> | undefined;
  #closed = false;
  /** Aborted by `[Symbol.asyncDispose]()` to stop running listeners. */
  readonly #closing = new AbortController();
  readonly #listeners = new Set<Promise<void>>();

  /**
   * Creates a queue on a SQLite file.  Nothing is opened until the first
   * call; the table is created then if it does not exist.
   * @param options The file, table, lease, poll interval and concurrency.
   * @throws {TypeError} When an option has the wrong type (its name is in
   *                     the message).
   * @throws {RangeError} When an option is out of range.
   * @since 0.1.0
   */
  constructor(options: SqliteMessageQueueOptions) {
    this.#options = resolveQueueOptions(options);
    this.#channel = wakeupChannel(this.#options.path, this.#options.table);
  }

  #connect(): Promise<Connection> {
    if (this.#closed) return Promise.reject(new SqliteClosedError("SqliteMessageQueue"));
    this.#connection ??= this.#open().catch((error) => {
      // Let the next call try again (the file may become writable).
      this.#connection = undefined;
      throw error;
    });
    return this.#connection;
  }

  async #open(): Promise<Connection> {
    const { path, table, busyTimeoutMs } = this.#options;
    const database = await openSqliteDatabase(path);
    try {
      configureConnection(database, busyTimeoutMs);
      database.exec(queueSchemaSql(table));
      migrateDeduplicationColumns(
        database,
        table,
        (body) => runImmediateTransaction(database, body),
      );
      database.exec("PRAGMA synchronous = FULL");
      return {
        database,
        statements: prepareQueueStatements(database, table),
        synchronous: "FULL",
      };
    } catch (error) {
      database.close();
      throw error;
    }
  }

  /**
   * Adds a message.  Resolves once SQLite committed it.
   * @param message A JSON-compatible value.
   * @param options The delay and ordering key.
   * @returns Resolves once the message is stored.
   * @throws {SqliteClosedError} When the queue was closed.
   * @throws {TypeError} When the message is not JSON-serializable or
   *                     `delay` is not a duration.
   * @throws {RangeError} When `delay` is negative.
   * @since 0.1.0
   */
  enqueue(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    return this.enqueueMany([message], options);
  }

  /**
   * Adds several messages in one transaction, in order: either all are
   * stored or none.
   * @param messages JSON-compatible values.
   * @param options The delay and ordering key, applied to every message.
   * @returns Resolves once the messages are stored.
   * @throws {SqliteClosedError} When the queue was closed.
   * @throws {TypeError} When a message is not JSON-serializable or `delay`
   *                     is not a duration.
   * @throws {RangeError} When `delay` is negative.
   * @since 0.1.0
   */
  async enqueueMany(
    // deno-lint-ignore no-explicit-any
    messages: readonly any[],
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    const delayMs = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    const orderingKey = options.orderingKey ?? null;
    if (orderingKey !== null && typeof orderingKey !== "string") {
      throw new TypeError(`The orderingKey option must be a string; got ${typeof orderingKey}.`);
    }
    const encoded = messages.map(encodeMessage);
    if (encoded.length === 0) return;
    const connection = await this.#connect();
    if (this.#closed) throw new SqliteClosedError("SqliteMessageQueue");
    const { database, statements } = connection;
    setSynchronous(connection, "FULL");
    const readyAt = Date.now() + delayMs;
    if (encoded.length === 1) {
      statements.insert.run(encoded[0], orderingKey, readyAt);
    } else {
      runImmediateTransaction(database, () => {
        for (const text of encoded) statements.insert.run(text, orderingKey, readyAt);
      });
    }
    notifyWakeup(this.#channel);
  }

  /**
   * Adds a message unless a row enqueued with the same deduplication key
   * less than `deduplicationTtl` ago is still in the table (waiting,
   * running, or waiting for a retry in place).  The check and the insert
   * run in one `BEGIN IMMEDIATE` transaction, so concurrent calls from any
   * number of processes add one message.  The key is free again once that
   * row is acknowledged (deleted).
   * @param message A JSON-compatible value.
   * @param options The delay, ordering key, deduplication key and TTL.
   * @returns `true` when the message was added, `false` when the key was held.
   * @throws {SqliteClosedError} When the queue was closed.
   * @throws {TypeError} When the message is not JSON-serializable or an
   *                     option has the wrong type.
   * @throws {RangeError} When `delay` or `deduplicationTtl` is negative.
   * @since 0.2.0
   */
  async enqueueDeduplicated(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueDeduplicatedEnqueueOptions,
  ): Promise<boolean> {
    const delayMs = options.delay == null ? 0 : durationToMilliseconds(options.delay, "delay");
    const ttlMs = durationToMilliseconds(options.deduplicationTtl, "deduplicationTtl");
    const orderingKey = options.orderingKey ?? null;
    if (orderingKey !== null && typeof orderingKey !== "string") {
      throw new TypeError(`The orderingKey option must be a string; got ${typeof orderingKey}.`);
    }
    const key: unknown = options.deduplicationKey;
    if (typeof key !== "string" || key === "") {
      throw new TypeError("The deduplicationKey option must be a non-empty string.");
    }
    const text = encodeMessage(message, "The message");
    const connection = await this.#connect();
    if (this.#closed) throw new SqliteClosedError("SqliteMessageQueue");
    const { database, statements } = connection;
    setSynchronous(connection, "FULL");
    const added = runImmediateTransaction(database, () => {
      const now = Date.now();
      if (statements.deduplicationHeld.get(key, now) != null) return false;
      statements.insertDeduplicated.run(text, orderingKey, now + delayMs, key, now + ttlMs);
      return true;
    });
    if (added) notifyWakeup(this.#channel);
    return added;
  }

  /**
   * Counts the messages in the table.  `ready` excludes messages leased by
   * a worker; `queued` includes them.
   * @returns The counts.
   * @throws {SqliteClosedError} When the queue was closed.
   * @since 0.1.0
   */
  async getDepth(): Promise<MessageQueueDepth> {
    const { statements } = await this.#connect();
    const now = Date.now();
    const row = statements.depth.get(now, now, now)!;
    return {
      queued: Number(row.queued),
      ready: Number(row.ready),
      delayed: Number(row.delayed),
    };
  }

  /**
   * Hands messages to `handler` until `options.signal` aborts or the queue
   * is closed.  Up to {@link SqliteMessageQueueOptions.concurrency} handlers
   * run at once.  A message is deleted once its handler returns.  When the
   * handler throws, the error is logged and the message is handed out again
   * after one {@link SqliteMessageQueueOptions.leaseTime}.  The handler's
   * second argument, a `MessageRedelivery`, stores a new version of the
   * message in place and hands it out again after a delay; the message is
   * then not deleted when the handler returns.  A failed claim (a locked or
   * unreadable database) is logged and retried with backoff; the listener
   * never stops by itself.
   * @param handler Processes one message.
   * @param options The abort signal.
   * @returns Resolves after the signal aborted and the running handlers
   *          finished.
   * @throws {SqliteClosedError} When the queue was closed.
   * @since 0.1.0
   */
  listen(
    handler: MessageQueueHandler,
    options: MessageQueueListenOptions = {},
  ): Promise<void> {
    if (this.#closed) return Promise.reject(new SqliteClosedError("SqliteMessageQueue"));
    const listening = this.#listen(handler, options.signal);
    this.#listeners.add(listening);
    const forget = () => this.#listeners.delete(listening);
    listening.then(forget, forget);
    return listening;
  }

  async #listen(handler: MessageQueueHandler, signal: AbortSignal | undefined): Promise<void> {
    const { leaseMs, pollMs, concurrency } = this.#options;
    const owner = crypto.randomUUID();
    const running = new Map<Delivery, Promise<void>>();
    // Rows to delete (handled) and to release (their handler failed), both
    // batched into the next claim transaction.
    let acks: number[] = [];
    let releases: number[] = [];
    let connection: Connection | undefined;
    let woken = false;
    let wake: (() => void) | undefined;
    const poke = () => {
      woken = true;
      wake?.();
    };
    const stopped = () => signal?.aborted === true || this.#closing.signal.aborted;
    const unsubscribe = subscribeWakeup(this.#channel, poke);
    signal?.addEventListener("abort", poke);
    this.#closing.signal.addEventListener("abort", poke);

    /** The rows whose leases this listener still holds for a running handler. */
    const leasedIds = (): number[] => {
      const ids: number[] = [];
      for (const delivery of running.keys()) if (delivery.leased) ids.push(delivery.id);
      return ids;
    };

    const heartbeat = setInterval(() => {
      if (connection == null) return;
      const ids = leasedIds();
      if (ids.length === 0) return;
      try {
        setSynchronous(connection, "NORMAL");
        connection.statements.extendLeases.run(Date.now() + leaseMs, JSON.stringify(ids), owner);
      } catch (error) {
        logger.warn("Failed to extend the leases of {count} running messages: {error}", {
          count: ids.length,
          error,
        });
      }
    }, Math.max(1, Math.floor(leaseMs / 3)));

    // Deletes the handled rows and releases the failed ones, to be handed
    // out again after a lease; runs inside a transaction.
    const flush = (statements: QueueStatements, handled: number[], failed: number[]) => {
      if (handled.length > 0) statements.deleteMany.run(JSON.stringify(handled));
      const readyAt = Date.now() + leaseMs;
      for (const id of failed) statements.redeliver.run(null, readyAt, id, owner);
    };

    const settle = (delivery: Delivery, failure: { error: unknown } | undefined) => {
      delivery.settled = true;
      running.delete(delivery);
      const messageId = delivery.id;
      if (delivery.redelivered === true) {
        if (failure != null) {
          logger.error(
            "A message handler failed for message {messageId} after redelivering it; " +
              "the new version stays queued: {error}",
            { messageId, error: failure.error },
          );
        }
      } else if (failure == null && delivery.redelivered === undefined) {
        acks.push(messageId);
      } else {
        // Not handled: the message comes back as it was once the release
        // (or, if that fails, the lease) runs out.
        delivery.leased = false;
        releases.push(messageId);
        if (failure != null) {
          logger.error(
            "A message handler failed for message {messageId}; the message will be " +
              "handed out again in {retryMs} ms: {error}",
            { messageId, retryMs: leaseMs, error: failure.error },
          );
        } else {
          logger.warn(
            "The handler of message {messageId} returned although its redelivery failed; " +
              "the message will be handed out again in {retryMs} ms.",
            { messageId, retryMs: leaseMs },
          );
        }
      }
      poke();
    };

    const start = (row: ClaimedRow, connection: Connection) => {
      const delivery: Delivery = { id: row.id, leased: true, settled: false };
      const redelivery: MessageRedelivery = {
        redeliver: (message: unknown, options: MessageRedeliveryOptions) => {
          try {
            this.#redeliver(connection, delivery, owner, message, options);
            return Promise.resolve();
          } catch (error) {
            return Promise.reject(error);
          }
        },
      };
      const done = Promise.resolve()
        .then(() => handler(JSON.parse(row.message), redelivery))
        .then(
          () => settle(delivery, undefined),
          (error: unknown) => settle(delivery, { error }),
        );
      running.set(delivery, done);
    };

    // `onlyStop`: after a failure, wait out the backoff even if enqueues
    // poke, so that a broken database is not hammered once per enqueue.
    const waitForWake = (ms: number, onlyStop = false) => {
      if ((woken && !onlyStop) || stopped()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve();
        }, ms);
        wake = () => {
          if (onlyStop && !stopped()) return;
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    };

    let failures = 0;
    try {
      while (!stopped()) {
        const free = concurrency - running.size;
        if (free <= 0) {
          // A finishing handler pokes; the poll interval is only a safety net.
          await waitForWake(pollMs);
          woken = false;
          continue;
        }
        woken = false;
        let claimed: ClaimedRow[] = [];
        let waitMs = pollMs;
        let failed = false;
        try {
          connection ??= await this.#connect();
          if (stopped()) break;
          const { database, statements } = connection;
          setSynchronous(connection, "NORMAL");
          const flushing = acks;
          const releasing = releases;
          const now = Date.now();
          claimed = runImmediateTransaction(database, () => {
            flush(statements, flushing, releasing);
            return statements.claim.all(
              now + leaseMs,
              owner,
              now,
              now,
              free,
            ) as unknown as ClaimedRow[];
          });
          acks = [];
          releases = [];
          failures = 0;
          if (claimed.length < free) {
            const renewed = [...leasedIds(), ...claimed.map((row) => row.id)];
            const next = statements.nextWake.get(now, now, JSON.stringify(renewed))?.at;
            if (next != null) waitMs = Math.min(waitMs, Math.max(0, Number(next) - Date.now()));
          }
        } catch (error) {
          if (error instanceof SqliteClosedError) break;
          failures++;
          failed = true;
          waitMs = Math.min(100 * 2 ** Math.min(failures - 1, 20), MAX_RETRY_BACKOFF_MS);
          logger.error(
            "Failed to claim messages from {table} (attempt {attempt}); retrying in {retryMs} ms: {error}",
            { table: this.#options.table, attempt: failures, retryMs: waitMs, error },
          );
        }
        // RETURNING gives rows in no promised order.
        claimed.sort((a, b) => a.ready_at - b.ready_at || a.id - b.id);
        for (const row of claimed) start(row, connection!);
        if (claimed.length > 0 && claimed.length === free) continue;
        await waitForWake(waitMs, failed);
      }
      while (running.size > 0) await Promise.all(running.values());
      if ((acks.length > 0 || releases.length > 0) && connection != null) {
        try {
          setSynchronous(connection, "NORMAL");
          const { database, statements } = connection;
          runImmediateTransaction(database, () => flush(statements, acks, releases));
        } catch (error) {
          // The leases run out and the messages are handed out again:
          // at-least-once, never lost.
          logger.error(
            "Failed to delete {count} handled messages and release {failed} failed ones: {error}",
            { count: acks.length, failed: releases.length, error },
          );
        }
      }
    } finally {
      clearInterval(heartbeat);
      unsubscribe();
      signal?.removeEventListener("abort", poke);
      this.#closing.signal.removeEventListener("abort", poke);
    }
  }

  /**
   * Stores a new version of a delivered message and releases its lease, so
   * that it is handed out again after the delay; the row keeps its id and
   * so its place in its ordering key.
   */
  #redeliver(
    connection: Connection,
    delivery: Delivery,
    owner: string,
    message: unknown,
    options: MessageRedeliveryOptions,
  ): void {
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
    const delayMs = durationToMilliseconds(options?.delay, "delay");
    const text = encodeMessage(message, "The redelivered message");
    delivery.redelivered = false;
    setSynchronous(connection, "NORMAL");
    const { changes } = connection.statements.redeliver.run(
      text,
      Date.now() + delayMs,
      delivery.id,
      owner,
    );
    if (Number(changes) === 0) {
      throw new Error(
        `Message ${delivery.id} was not redelivered: its lease ran out and another worker ` +
          "took it over.",
      );
    }
    delivery.redelivered = true;
    delivery.leased = false;
    // Other listeners in this process may be idle until a later timer.
    notifyWakeup(this.#channel);
  }

  /**
   * Stops this instance's listeners (waiting for their running handlers)
   * and closes its connection.  Stored messages stay in the file.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    await Promise.allSettled([...this.#listeners]);
    const connection = await this.#connection?.catch(() => undefined);
    this.#connection = undefined;
    connection?.database.close();
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
