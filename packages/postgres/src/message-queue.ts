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
  resolveLeaseOptions,
  runLeaseListener,
  RunningListeners,
  SiblingQueues,
} from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import type { Sql } from "postgres";
import { resolveClient } from "./client.ts";
import { PostgresClosedError } from "./errors.ts";
import type { PostgresMessageQueueOptions } from "./options.ts";
import { qualifiedName, validateIdentifier } from "./identifiers.ts";
import { PostgresLeaseEngine } from "./lease-engine.ts";
import { buildMessageQueueStatements, type MessageQueueStatements } from "./sql/message-queue.ts";
import { encodeJson } from "./json.ts";
import { createTables } from "./sql/table-setup.ts";

const logger = getLogger(["fedwork", "postgres"]);

// Room for the "_due_idx"/"_key_idx" suffixes of the derived index names.
const MAX_TABLE_NAME_LENGTH = 54;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_POLL_INTERVAL_MS = 5_000;
// Chosen from bench/lease-prefetch.ts; see the manual's PostgreSQL page.
const DEFAULT_PREFETCH = 16;
// How far the prefetch may grow while draining a backlog.  Typed tasks at
// concurrency 1 drained 38,000-45,000/s growing to 256 and 57,000-58,000/s
// growing to 1,024 (three runs each, docs/benchmarks.md); the heartbeat
// still renews every lease a listener holds in one statement.
const DEFAULT_MAX_PREFETCH = 1_024;
const PREPARED = { prepare: true } as const;

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

  /**
   * Always `true`: claims take ready rows highest priority first, walking
   * an index on `(priority DESC, id)` (see
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
    return this.#concurrency;
  }

  readonly #sql: Sql;
  readonly #ownsClient: boolean;
  readonly #given: PostgresMessageQueueOptions;
  readonly #siblings: SiblingQueues<PostgresMessageQueue> = new SiblingQueues(
    (channel) => this.#createSibling(channel),
    {
      assertOpen: () => {
        if (this.#closed) throw new PostgresClosedError("PostgresMessageQueue");
      },
    },
  );
  readonly #statements: MessageQueueStatements;
  readonly #lockName: string;
  readonly #channel: string;
  readonly #leaseMs: number;
  readonly #pollIntervalMs: number;
  readonly #heartbeatMs: number;
  readonly #concurrency: number;
  readonly #prefetch: number;
  readonly #maxPrefetch: number;
  #initialized: Promise<void> | undefined;
  #closed = false;
  /** The running listen() loops, stopped and awaited on dispose. */
  readonly #loops = new RunningListeners();

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
    assertKnownOptions(options, [
      "tableName",
      "schema",
      "channelName",
      "leaseTime",
      "pollInterval",
      "concurrency",
      "prefetch",
      "maxPrefetch",
      "initialized",
      "synchronousClaims",
    ], {
      where: "new PostgresMessageQueue()",
      hints: {
        handlerTimeout: "Fedwork's queue does not time handlers out: a live worker renews " +
          "the lease of each running handler, and a dead worker's messages are handed out " +
          "again once their lease (the leaseTime option) runs out.  Remove the option, and " +
          "bound slow work in the handler itself (an AbortSignal.timeout(), say).",
      },
    });
    this.#given = options;
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
    const lease = resolveLeaseOptions(options, {
      prefetch: DEFAULT_PREFETCH,
      maxPrefetch: DEFAULT_MAX_PREFETCH,
      leaseMs: DEFAULT_LEASE_MS,
      pollMs: DEFAULT_POLL_INTERVAL_MS,
    });
    this.#leaseMs = lease.leaseMs;
    this.#pollIntervalMs = lease.pollMs;
    this.#heartbeatMs = lease.heartbeatMs;
    this.#concurrency = lease.concurrency;
    this.#prefetch = lease.prefetch;
    this.#maxPrefetch = lease.maxPrefetch;
    const { synchronousClaims } = options;
    if (synchronousClaims !== undefined && typeof synchronousClaims !== "boolean") {
      throw new TypeError(
        `synchronousClaims must be a boolean; got ${JSON.stringify(synchronousClaims)}.`,
      );
    }
    this.#statements = buildMessageQueueStatements(table, schema, { synchronousClaims });
    this.#lockName = qualifiedName(table, schema);
    if (options.initialized === true) this.#initialized = Promise.resolve();
    ({ sql: this.#sql, ownsClient: this.#ownsClient } = resolveClient(
      client,
      "new PostgresMessageQueue()",
    ));
  }

  /**
   * Adds a message.  Resolves once PostgreSQL has committed it.
   * @param message A JSON-compatible value.
   * @param options The delay, ordering key and priority.
   * @returns Resolves when the message is stored.
   * @throws {TypeError} When the message is not JSON-compatible or the delay
   *                     is not a duration.
   * @throws {RangeError} When the delay is negative or the priority is out
   *                     of range.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.1.0
   */
  async enqueue(
    // deno-lint-ignore no-explicit-any
    message: any,
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    const { delayMs, orderingKey, priority } = this.#checkEnqueue(options);
    const json = encodeJson(message, "message");
    await this.#initialize();
    await this.#sql.unsafe(
      this.#statements.enqueue,
      [json, orderingKey, delayMs, this.#channel, priority],
      PREPARED,
    );
  }

  /**
   * Adds several messages in one statement: all of them or none.
   * @param messages JSON-compatible values, handed out in this order.
   * @param options The delay, ordering key and priority, applied to every
   *                message.
   * @returns Resolves when the messages are stored.
   * @throws {TypeError} When a message is not JSON-compatible.
   * @throws {RangeError} When the delay is negative or the priority is out
   *                     of range.
   * @throws {PostgresClosedError} When the queue was disposed.
   * @since 0.1.0
   */
  async enqueueMany(
    // deno-lint-ignore no-explicit-any
    messages: readonly any[],
    options: MessageQueueEnqueueOptions = {},
  ): Promise<void> {
    const { delayMs, orderingKey, priority } = this.#checkEnqueue(options);
    const json = messages.map((message, i) => encodeJson(message, `message at index ${i}`));
    if (json.length === 0) return;
    await this.#initialize();
    await this.#sql.unsafe(
      this.#statements.enqueueMany,
      [json, orderingKey, delayMs, this.#channel, priority],
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
    const { delayMs, orderingKey, priority } = this.#checkEnqueue(options);
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
        [json, orderingKey, delayMs, this.#channel, key, ttlMs, priority],
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
    const engine = new PostgresLeaseEngine({
      sql: this.#sql,
      statements: this.#statements,
      channel: this.#channel,
      leaseMs: this.#leaseMs,
      initialize: () => this.#initialize(),
    });
    const loop = runLeaseListener(engine, handler, {
      concurrency: this.#concurrency,
      prefetch: this.#prefetch,
      maxPrefetch: this.#maxPrefetch,
      batchSize: options.batchSize,
      heartbeatMs: this.#heartbeatMs,
      pollMs: this.#pollIntervalMs,
      handBackDelayMs: this.#leaseMs,
      queueName: `PostgreSQL table ${this.#lockName}`,
      signal: this.#loops.signal(signal),
      logger,
    });
    return this.#loops.track(loop);
  }

  #checkOpen(): void {
    if (this.#closed) throw new PostgresClosedError("PostgresMessageQueue");
  }

  #checkEnqueue(
    options: MessageQueueEnqueueOptions,
  ): { delayMs: number; orderingKey: string | null; priority: number } {
    this.#checkOpen();
    const delayMs = options.delay === undefined
      ? 0
      : durationToMilliseconds(options.delay, "delay");
    const orderingKey = options.orderingKey ?? null;
    if (orderingKey !== null && typeof orderingKey !== "string") {
      throw new TypeError(`orderingKey must be a string; got ${typeof orderingKey}.`);
    }
    return { delayMs, orderingKey, priority: checkMessagePriority(options.priority) };
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
   * Returns a sibling queue for capability routing: the same client and
   * settings on the table `<table>_<channel>` (the table name shortened
   * when needed to fit 54 characters) with the notification channel
   * `<channel name>_<channel>`, created on first use like the table.  The
   * same channel gives the same sibling; it is disposed of with this queue.
   * @param channel Lowercase letters, digits and underscores.
   * @returns The sibling.
   * @throws {TypeError} When the channel is malformed.
   * @throws {PostgresClosedError} After disposal.
   * @since 0.2.0
   */
  derive(channel: string): PostgresMessageQueue {
    return this.#siblings.derive(channel);
  }

  #createSibling(channel: string): PostgresMessageQueue {
    const table = this.#given.tableName ?? "fedwork_message_queue";
    return new PostgresMessageQueue(this.#sql, {
      ...this.#given,
      tableName: `${table.slice(0, MAX_TABLE_NAME_LENGTH - channel.length - 1)}_${channel}`,
      channelName: `${this.#channel.slice(0, 62 - channel.length)}_${channel}`,
      initialized: false,
    });
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
    await this.#siblings.disposeAll();
    await this.#loops.close();
    if (this.#ownsClient) await this.#sql.end({ timeout: 5 });
  }
}
