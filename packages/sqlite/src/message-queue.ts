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
  assertKnownOptions,
  checkMessagePriority,
  type LeaseClaimRequest,
  type LeaseClaimResult,
  type LeasedMessage,
  type LeaseEngine,
  runLeaseListener,
  RunningListeners,
  SiblingQueues,
} from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import {
  configureConnection,
  openSqliteDatabase,
  runImmediateTransaction,
  type SqliteDatabase,
} from "./driver.ts";
import {
  FEDIFY_SQLITE_HINTS,
  resolveConstructorArguments,
  type SqliteOpenDatabase,
} from "./constructor-arguments.ts";
import { SqliteClosedError } from "./errors.ts";
import { notifyWakeup, subscribeWakeup, wakeupChannel } from "./local-wakeup.ts";
import {
  type ResolvedQueueOptions,
  resolveQueueOptions,
  type SqliteMessageQueueOptions,
} from "./options.ts";
import {
  migrateDeduplicationColumns,
  migrateDeliveriesColumn,
  migratePriorityColumn,
  prepareQueueStatements,
  queueSchemaSql,
  type QueueStatements,
} from "./sql/message-queue.ts";
import { LazyConnection } from "./lazy-connection.ts";

const logger = getLogger(["fedwork", "sqlite"]);

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
  readonly priority: number;
  readonly deliveries: number;
}

/** A row leased to a listener. */
interface LeasedRow extends LeasedMessage {
  readonly id: number;
  /** The message as JSON text. */
  readonly text: string;
}

/**
 * The storage side of one `listen()` call (see `runLeaseListener()`): the
 * outcomes of finished handlers and the next claim share one
 * `BEGIN IMMEDIATE` transaction.
 */
class SqliteLeaseEngine implements LeaseEngine<LeasedRow> {
  readonly #connect: () => Promise<Connection>;
  readonly #options: ResolvedQueueOptions;
  readonly #channel: string;
  /** This listener's lease owner id. */
  readonly #owner = crypto.randomUUID();
  #connection: Connection | undefined;

  constructor(connect: () => Promise<Connection>, options: ResolvedQueueOptions, channel: string) {
    this.#connect = connect;
    this.#options = options;
    this.#channel = channel;
  }

  async claim(request: LeaseClaimRequest<LeasedRow>): Promise<LeaseClaimResult<LeasedRow>> {
    const connection = this.#connection ??= await this.#connect();
    const { database, statements } = connection;
    const { leaseMs } = this.#options;
    const { count, acks, handBacks } = request;
    setSynchronous(connection, "NORMAL");
    const now = Date.now();
    const claimed = runImmediateTransaction(database, () => {
      if (acks.length > 0) statements.deleteMany.run(ids(acks), this.#owner);
      if (handBacks.length > 0) statements.handBack.run(now + leaseMs, ids(handBacks), this.#owner);
      if (count === 0) return [];
      return statements.claim.all(
        now + leaseMs,
        this.#owner,
        now,
        now,
        count,
      ) as unknown as ClaimedRow[];
    });
    // RETURNING gives rows in no promised order.
    claimed.sort((a, b) => b.priority - a.priority || a.ready_at - b.ready_at || a.id - b.id);
    const messages = claimed.map((row) => ({
      id: row.id,
      text: row.message,
      deliveryCount: Number(row.deliveries),
    }));
    if (count === 0 || messages.length === count) return { messages };
    // Nothing else is claimable now: sleep until a delay runs out or a
    // lease that this listener does not renew expires.
    const renewed = ids([...request.held, ...messages]);
    const next = statements.nextWake.get(now, now, renewed)?.at;
    return { messages, waitMs: next == null ? undefined : Math.max(0, Number(next) - Date.now()) };
  }

  release(messages: readonly LeasedRow[]): Promise<void> {
    return this.#run((connection) => {
      connection.statements.release.run(ids(messages), this.#owner);
      // Other listeners of this process may take them at once.
      notifyWakeup(this.#channel);
    });
  }

  extendLeases(messages: readonly LeasedRow[]): Promise<void> {
    return this.#run((connection) => {
      connection.statements.extendLeases.run(
        Date.now() + this.#options.leaseMs,
        ids(messages),
        this.#owner,
      );
    });
  }

  /**
   * Stores a new version of a running message and releases its lease, so
   * that it is handed out again after the delay; the row keeps its id and
   * so its place in its ordering key.
   */
  redeliver(message: LeasedRow, payload: unknown, delayMs: number): Promise<void> {
    return this.#run((connection) => {
      const text = encodeMessage(payload, "The redelivered message");
      const { changes } = connection.statements.redeliver.run(
        text,
        Date.now() + delayMs,
        message.id,
        this.#owner,
      );
      if (Number(changes) === 0) {
        throw new Error(
          `Message ${message.id} was not redelivered: its lease ran out and another worker ` +
            "took it over.",
        );
      }
      // Other listeners in this process may be idle until a later timer.
      notifyWakeup(this.#channel);
    });
  }

  decode(message: LeasedRow): unknown {
    return JSON.parse(message.text);
  }

  subscribe(wake: () => void): () => void {
    return subscribeWakeup(this.#channel, wake);
  }

  /** Runs a short write on the listener's connection (NORMAL sync). */
  #run(body: (connection: Connection) => void): Promise<void> {
    try {
      const connection = this.#connection;
      if (connection == null) throw new Error("The listener has no connection yet.");
      setSynchronous(connection, "NORMAL");
      body(connection);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/** The ids of rows as the JSON array the statements take. */
function ids(rows: readonly { readonly id: number }[]): string {
  return JSON.stringify(rows.map((row) => row.id));
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
 * Priorities: a claim takes ready rows highest priority first, then by
 * ready time; a row with an ordering key waits for every earlier row with
 * its key whatever the priorities.  Messages a listener has already
 * prefetched run before a higher-priority message enqueued after them.
 *
 * Pickup: enqueues from the same process wake its listeners at once, and
 * delays and expired leases wake them with a timer; enqueues from other
 * processes are found by polling every
 * {@link SqliteMessageQueueOptions.pollInterval} (1 s by default), because
 * SQLite cannot notify across processes.
 *
 * Roles: given to `createFederation()` as its one `queue`, the queue
 * keeps received activities in its own table and gives deliveries,
 * fan-outs and tasks a table each (`<tableName>_outbox`, `_fanout`,
 * `_task`), each with a listener and
 * {@link SqliteMessageQueueOptions.concurrency} slots of its own, so that a
 * long task never holds up the inbox or the outbox (see
 * {@link SqliteMessageQueueOptions.separateRoles}).
 *
 * A handler that throws does not lose its message: the message is handed
 * out again after one {@link SqliteMessageQueueOptions.leaseTime}.  Handlers
 * get a `MessageRedelivery` as their second argument, which stores a new
 * version of the message in place (keeping its ordering key held) and
 * hands it out again after a delay.
 *
 * Hand-outs are counted: the claim increments the row's `deliveries`
 * column in the same statement, before the handler runs, and hands the
 * count to the handler as `MessageRedelivery.deliveryCount`; a redelivery
 * in place resets it, and prefetched rows released unstarted when a
 * listener stops take their claim's count back.
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

  /**
   * Always `true`: claims take ready rows highest priority first (see
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

  /**
   * Whether a federation given this queue for every role gives the
   * outbox, fan-out and task roles sibling tables of their own: the
   * `separateRoles` option (see `MessageQueue.separateRoles`).
   * @returns The resolved `separateRoles` option.
   * @since 0.4.0
   */
  get separateRoles(): boolean {
    return this.#options.separateRoles;
  }

  readonly #options: ResolvedQueueOptions;
  readonly #given: SqliteMessageQueueOptions;
  readonly #siblings: SiblingQueues<SqliteMessageQueue> = new SiblingQueues(
    (channel) => this.#createSibling(channel),
    {
      assertOpen: () => {
        if (this.#closed) throw new SqliteClosedError("SqliteMessageQueue");
      },
    },
  );
  readonly #channel: string;
  readonly #connection = new LazyConnection<Connection>("SqliteMessageQueue", () => this.#open());
  #closed = false;
  /** The running listen() calls, stopped and awaited on dispose. */
  readonly #listeners = new RunningListeners();

  /**
   * Creates a queue on a SQLite file.  Nothing is opened until the first
   * call; the table is created then if it does not exist.
   * @param options The file, table, lease, poll interval and concurrency.
   * @throws {TypeError} When an option has the wrong type (its name is in
   *                     the message).
   * @throws {RangeError} When an option is out of range.
   * @since 0.1.0
   */
  constructor(options: SqliteMessageQueueOptions);
  /**
   * Creates a queue on the file of an open database, as `@fedify/sqlite`'s
   * `new SqliteMessageQueue(db, options?)` does.  The queue opens
   * connections of its own to that file (and closes them on dispose); the
   * database passed in is neither used nor closed (Fedify's queue closed
   * it on dispose: close it yourself).  An in-memory database is refused.
   * Fedify's `tableName` and `pollInterval` mean the same here;
   * `initialized` and `journalMode: "WAL"` are accepted and change
   * nothing; `maxRetries` and `retryDelayMs` are refused in favour of
   * `busyTimeout`.
   * @param database An open `node:sqlite` `DatabaseSync` or `bun:sqlite`
   *                 `Database` on a file.
   * @param options The table, lease, poll interval and concurrency.
   * @throws {TypeError} When the first argument is neither a database nor
   *                     options, the database is in memory, or an option is
   *                     unknown or has the wrong type.
   * @throws {RangeError} When an option is out of range.
   * @since 0.4.0
   */
  constructor(
    database: SqliteOpenDatabase,
    options?: Omit<SqliteMessageQueueOptions, "path"> & {
      readonly initialized?: boolean;
      readonly journalMode?: "WAL";
    },
  );
  constructor(
    first: SqliteMessageQueueOptions | SqliteOpenDatabase,
    second?: Omit<SqliteMessageQueueOptions, "path"> & {
      readonly initialized?: boolean;
      readonly journalMode?: "WAL";
    },
  ) {
    const options = resolveConstructorArguments<SqliteMessageQueueOptions>(
      first,
      second,
      "new SqliteMessageQueue()",
      "new SqliteMessageQueue(db)",
    );
    assertKnownOptions(options, [
      "path",
      "tableName",
      "leaseTime",
      "pollInterval",
      "concurrency",
      "prefetch",
      "maxPrefetch",
      "busyTimeout",
      "separateRoles",
    ], { where: "new SqliteMessageQueue()", hints: FEDIFY_SQLITE_HINTS });
    this.#given = options;
    this.#options = resolveQueueOptions(options);
    this.#channel = wakeupChannel(this.#options.path, this.#options.table);
  }

  #connect(): Promise<Connection> {
    return this.#connection.get();
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
      migratePriorityColumn(database, table, (body) => runImmediateTransaction(database, body));
      migrateDeliveriesColumn(database, table, (body) => runImmediateTransaction(database, body));
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
   * @param options The delay, ordering key and priority.
   * @returns Resolves once the message is stored.
   * @throws {SqliteClosedError} When the queue was closed.
   * @throws {TypeError} When the message is not JSON-serializable or
   *                     `delay` is not a duration.
   * @throws {RangeError} When `delay` is negative or `priority` is out of
   *                     range.
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
   * @param options The delay, ordering key and priority, applied to every
   *                message.
   * @returns Resolves once the messages are stored.
   * @throws {SqliteClosedError} When the queue was closed.
   * @throws {TypeError} When a message is not JSON-serializable or `delay`
   *                     is not a duration.
   * @throws {RangeError} When `delay` is negative or `priority` is out of
   *                     range.
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
    const priority = checkMessagePriority(options.priority);
    const encoded = messages.map(encodeMessage);
    if (encoded.length === 0) return;
    const connection = await this.#connect();
    if (this.#closed) throw new SqliteClosedError("SqliteMessageQueue");
    const { database, statements } = connection;
    setSynchronous(connection, "FULL");
    const readyAt = Date.now() + delayMs;
    if (encoded.length === 1) {
      statements.insert.run(encoded[0], orderingKey, readyAt, priority);
    } else {
      runImmediateTransaction(database, () => {
        for (const text of encoded) statements.insert.run(text, orderingKey, readyAt, priority);
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
   * @throws {RangeError} When `delay` or `deduplicationTtl` is negative, or
   *                     `priority` is out of range.
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
    const priority = checkMessagePriority(options.priority);
    const text = encodeMessage(message, "The message");
    const connection = await this.#connect();
    if (this.#closed) throw new SqliteClosedError("SqliteMessageQueue");
    const { database, statements } = connection;
    setSynchronous(connection, "FULL");
    const added = runImmediateTransaction(database, () => {
      const now = Date.now();
      if (statements.deduplicationHeld.get(key, now) != null) return false;
      statements.insertDeduplicated.run(
        text,
        orderingKey,
        now + delayMs,
        key,
        now + ttlMs,
        priority,
      );
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
    return this.#listeners.track(this.#listen(handler, options.signal, options.batchSize));
  }

  #listen(
    handler: MessageQueueHandler,
    signal: AbortSignal | undefined,
    batchSize: number | undefined,
  ): Promise<void> {
    const { concurrency, prefetch, maxPrefetch, leaseMs, heartbeatMs, pollMs, table } =
      this.#options;
    const stop = this.#listeners.signal(signal);
    return runLeaseListener(
      new SqliteLeaseEngine(() => this.#connect(), this.#options, this.#channel),
      handler,
      {
        concurrency,
        prefetch,
        maxPrefetch,
        batchSize,
        heartbeatMs,
        pollMs,
        handBackDelayMs: leaseMs,
        queueName: `SQLite table ${JSON.stringify(table)}`,
        signal: stop,
        logger,
      },
    );
  }

  /**
   * Returns a sibling queue for capability routing: the same file and
   * settings on the table `<table>_<channel>`, created on first use, with
   * a connection of its own.  The same channel gives the same sibling; it
   * is disposed of with this queue.
   * @param channel Lowercase letters, digits and underscores.
   * @returns The sibling.
   * @throws {TypeError} When the channel is malformed.
   * @throws {SqliteClosedError} After disposal.
   * @since 0.2.0
   */
  derive(channel: string): SqliteMessageQueue {
    return this.#siblings.derive(channel);
  }

  #createSibling(channel: string): SqliteMessageQueue {
    return new SqliteMessageQueue({
      ...this.#given,
      tableName: `${this.#options.table}_${channel}`,
    });
  }

  /**
   * Stops this instance's listeners (waiting for their running handlers)
   * and closes its connection.  Stored messages stay in the file.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#siblings.disposeAll();
    await this.#listeners.close();
    await this.#connection.close();
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
