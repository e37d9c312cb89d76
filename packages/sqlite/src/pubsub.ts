import type { PubSub, PubSubSubscribeOptions } from "@fedwork/core";
import { assertKnownOptions, checkPublication, checkSubscription } from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import {
  configureConnection,
  openSqliteDatabase,
  runImmediateTransaction,
  type SqliteDatabase,
} from "./driver.ts";
import { SqliteClosedError } from "./errors.ts";
import {
  type ResolvedPubSubOptions,
  resolvePubSubOptions,
  type SqlitePubSubOptions,
} from "./options.ts";
import { preparePubSubStatements, pubsubSchemaSql, type PubSubStatements } from "./sql/pubsub.ts";
import { LazyConnection } from "./lazy-connection.ts";

const logger = getLogger(["fedwork", "sqlite"]);

/** How many publications one read takes; a longer backlog takes several. */
const READ_BATCH = 500;

interface Connection {
  readonly database: SqliteDatabase;
  readonly statements: PubSubStatements;
}

/** One `subscribe()` call. */
interface Subscription {
  readonly listener: (payload: string) => void;
  /** The newest row when it subscribed: older ones are not for it. */
  readonly since: number;
}

/** A publication waiting for the turn's one transaction. */
interface PendingPublication {
  readonly topic: string;
  readonly payload: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface PublicationRow {
  readonly id: number | bigint;
  readonly topic: string;
  readonly payload: string;
}

/**
 * A {@link PubSub} in a SQLite file, for processes on one machine that
 * share the file: what carries task progress, status changes and
 * cancellation requests between a web process and its workers when they
 * use `@fedwork/sqlite` for the queue and the store.
 *
 * SQLite cannot notify another connection, so a publication is a row in a
 * table (`fedwork_pubsub` by default), and each instance with subscribers
 * asks SQLite every {@link SqlitePubSubOptions.pollInterval} (50 ms by
 * default) whether another connection committed since it last asked
 * (`PRAGMA data_version`: a counter in the file's shared memory, no table
 * read).  Only when one did does it read the rows after the last one it
 * saw.  A payload therefore reaches another process within one poll
 * interval of its commit; subscribers in the publishing instance get it at
 * once, without the table.  Rows older than
 * {@link SqlitePubSubOptions.retention} are deleted by later publishes.
 *
 * Delivery is best effort, as `PubSub` allows: a subscriber gets what was
 * published after its `subscribe()` resolved, unless its process did not
 * poll for longer than the retention.
 *
 * The instance opens its own connection on first use;
 * `[Symbol.asyncDispose]()` ends the subscriptions and closes it.
 * @example
 * ```ts
 * import { createFederation } from "@fedwork/core";
 * import { SqliteKvStore, SqliteMessageQueue, SqlitePubSub } from "@fedwork/sqlite";
 *
 * const federation = createFederation<void>({
 *   kv: new SqliteKvStore({ path: "app.sqlite" }),
 *   queue: new SqliteMessageQueue({ path: "app.sqlite" }),
 *   // Progress and cancellations reach the other processes on the file.
 *   pubsub: new SqlitePubSub({ path: "app.sqlite" }),
 * });
 * ```
 * @since 0.4.0
 */
export class SqlitePubSub implements PubSub, AsyncDisposable {
  readonly #options: ResolvedPubSubOptions;
  /** Marks this instance's rows, which its polls skip (delivered at once). */
  readonly #origin = crypto.randomUUID();
  /** The subscriptions of each topic. */
  readonly #topics = new Map<string, Set<Subscription>>();
  #subscriptions = 0;
  readonly #connection = new LazyConnection<Connection>("SqlitePubSub", () => this.#open());
  #closed = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The last row this instance read. */
  #cursor = 0;
  /** The `data_version` at the last poll. */
  #version: unknown = undefined;
  #lastPruneAt = 0;
  /** The publications of this turn, written together (see publish()). */
  #pending: PendingPublication[] = [];
  /** Aborts every subscription on dispose. */
  readonly #disposal = new AbortController();

  /**
   * Creates the transport; nothing is opened until first use.
   * @param options The file, table, poll interval, retention and busy
   *                timeout.
   * @throws {UnknownOptionError} When an option's name is unknown.
   * @throws {TypeError} When an option has the wrong type (its name is in
   *                     the message).
   * @throws {RangeError} When a duration is not positive.
   * @since 0.4.0
   */
  constructor(options: SqlitePubSubOptions) {
    assertKnownOptions(options, ["path", "tableName", "pollInterval", "retention", "busyTimeout"], {
      where: "new SqlitePubSub()",
    });
    this.#options = resolvePubSubOptions(options);
  }

  #connect(): Promise<Connection> {
    return this.#connection.get();
  }

  async #open(): Promise<Connection> {
    const { path, table, busyTimeoutMs } = this.#options;
    const database = await openSqliteDatabase(path);
    try {
      configureConnection(database, busyTimeoutMs);
      database.exec(pubsubSchemaSql(table));
      // Publications are best effort: no flush to disk per row.
      database.exec("PRAGMA synchronous = NORMAL");
      return { database, statements: preparePubSubStatements(database, table) };
    } catch (error) {
      database.close();
      throw error;
    }
  }

  /**
   * Publishes a payload: delivered to this instance's subscribers at once
   * (in a later microtask) and stored for the other instances on the file,
   * which read it at their next poll.
   * @param topic The topic.
   * @param payload The payload.
   * @returns Resolves once the row is committed.
   * @throws {TypeError} When the topic or payload is not a string.
   * @throws {SqliteClosedError} After disposal.
   * @since 0.4.0
   */
  async publish(topic: string, payload: string): Promise<void> {
    checkPublication(topic, payload);
    const connection = await this.#connect();
    if (this.#closed) throw new SqliteClosedError("SqlitePubSub");
    // The publications made in one turn (the status changes of the tasks
    // a claim started together) share one transaction: one write lock
    // and one commit rather than one each.
    return new Promise<void>((resolve, reject) => {
      if (this.#pending.length === 0) queueMicrotask(() => this.#flush(connection));
      this.#pending.push({ topic, payload, resolve, reject });
    });
  }

  /** Writes this turn's publications and delivers them to this instance. */
  #flush({ database, statements }: Connection): void {
    const batch = this.#pending;
    this.#pending = [];
    const now = Date.now();
    try {
      runImmediateTransaction(database, () => {
        for (const { topic, payload } of batch) {
          statements.insert.run(topic, payload, this.#origin, now);
        }
        // At most one prune per tenth of the retention, whoever publishes.
        if (now - this.#lastPruneAt >= this.#options.retentionMs / 10) {
          this.#lastPruneAt = now;
          statements.prune.run(now - this.#options.retentionMs);
        }
      });
    } catch (error) {
      for (const publication of batch) publication.reject(error);
      return;
    }
    for (const { topic, payload, resolve } of batch) {
      this.#deliver(topic, payload, Infinity);
      resolve();
    }
  }

  /**
   * Calls `listener` with each payload published on `topic`, by this or
   * any other instance on the file, until `options.signal` aborts.
   * Resolves once the subscription is active: payloads published after
   * that are delivered.
   * @param topic The topic.
   * @param listener Called with each payload; an exception it throws is
   *                 logged and ignored.
   * @param options The signal that ends the subscription.
   * @returns Resolves once subscribed.
   * @throws {TypeError} When the topic or listener is malformed.
   * @throws {SqliteClosedError} After disposal.
   * @since 0.4.0
   */
  async subscribe(
    topic: string,
    listener: (payload: string) => void,
    options: PubSubSubscribeOptions = {},
  ): Promise<void> {
    checkSubscription(topic, listener);
    const { signal } = options;
    if (signal?.aborted) return;
    const { statements } = await this.#connect();
    if (this.#closed) throw new SqliteClosedError("SqlitePubSub");
    if (signal?.aborted) return;
    const newest = Number(statements.newest.get()?.id ?? 0);
    // An object per call, so that one function subscribed twice makes two
    // subscriptions that end separately.
    const subscription: Subscription = { listener, since: newest };
    if (this.#timer == null) this.#start(statements, newest);
    let set = this.#topics.get(topic);
    if (set == null) this.#topics.set(topic, set = new Set());
    set.add(subscription);
    this.#subscriptions++;
    const end = () => {
      signal?.removeEventListener("abort", end);
      this.#disposal.signal.removeEventListener("abort", end);
      if (!set.delete(subscription)) return;
      if (set.size === 0 && this.#topics.get(topic) === set) this.#topics.delete(topic);
      if (--this.#subscriptions === 0) this.#stop();
    };
    signal?.addEventListener("abort", end, { once: true });
    this.#disposal.signal.addEventListener("abort", end, { once: true });
  }

  /** Starts polling, from the newest row. */
  #start(statements: PubSubStatements, newest: number): void {
    this.#cursor = newest;
    this.#version = statements.dataVersion.get()?.data_version;
    this.#timer = setInterval(() => this.#poll(statements), this.#options.pollMs);
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads the rows other connections committed since the last poll. */
  #poll(statements: PubSubStatements): void {
    try {
      const version = statements.dataVersion.get()?.data_version;
      if (version === this.#version) return;
      this.#version = version;
      for (;;) {
        const rows = statements.readAfter.all(
          this.#cursor,
          this.#origin,
          READ_BATCH,
        ) as unknown as PublicationRow[];
        for (const row of rows) {
          const id = Number(row.id);
          this.#cursor = id;
          this.#deliver(row.topic, row.payload, id);
        }
        if (rows.length < READ_BATCH || this.#timer == null) break;
      }
    } catch (error) {
      // A locked or vanished file: the next poll tries again (data_version
      // was taken, so reset it to read again).
      this.#version = undefined;
      logger.warn("Could not read the publications of {table}: {error}", {
        table: this.#options.table,
        error,
      });
    }
  }

  /**
   * Calls the topic's listeners that subscribed before row `id` was
   * published (`Infinity`: a publication of this instance, for all).
   */
  #deliver(topic: string, payload: string, id: number): void {
    const set = this.#topics.get(topic);
    if (set == null) return;
    for (const subscription of [...set]) {
      if (subscription.since >= id) continue;
      try {
        subscription.listener(payload);
      } catch (error) {
        logger.error("A subscriber of the topic {topic} threw: {error}", { topic, error });
      }
    }
  }

  /** How many subscriptions are active, across topics. */
  get subscriptionCount(): number {
    return this.#subscriptions;
  }

  /**
   * Ends every subscription and closes the connection.  Publications stay
   * in the file until pruned.
   * @since 0.4.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#disposal.abort();
    this.#stop();
    await this.#connection.close();
  }
}
