import type { DurationInput } from "@fedwork/core";
import { positiveDurationOption, resolveLeaseOptions } from "@fedwork/core/queue-kit";
import { quoteIdentifier } from "./identifier.ts";

/**
 * Options for {@link SqliteMessageQueue}.
 * @since 0.1.0
 */
export interface SqliteMessageQueueOptions {
  /**
   * The SQLite database file; created when it does not exist.  Every
   * process that shares the queue opens the same file.  Required.
   */
  readonly path: string;

  /**
   * The table holding the messages; created on first use.  Letters, digits
   * and underscores only.  `"fedwork_messages"` by default.
   */
  readonly tableName?: string;

  /**
   * How long a claimed message stays invisible to other workers.  A live
   * listener extends the lease of every running handler every third of
   * this time; when a worker dies, its messages are handed out again once
   * the lease runs out.  30 seconds by default.
   */
  readonly leaseTime?: DurationInput;

  /**
   * How often an idle listener looks for messages enqueued by *other
   * processes* (SQLite cannot notify across processes).  Enqueues made in
   * the same process, delays running out and expired leases wake the
   * listener without waiting for this.  One second by default.
   */
  readonly pollInterval?: DurationInput;

  /**
   * How many handlers one {@link SqliteMessageQueue.listen} call runs at
   * once.  Messages that share an ordering key still never run at the same
   * time.  4 by default (1 before 0.4.0), so that one long handler leaves
   * the listener's other slots to the messages behind it.
   */
  readonly concurrency?: number;

  /**
   * Whether a federation given this queue as its one `queue` option gives
   * the outbox, fan-out and task roles tables of their own
   * (`<tableName>_outbox`, `_fanout`, `_task`, through
   * {@link SqliteMessageQueue.derive}), each listened to apart with its own
   * {@link SqliteMessageQueueOptions.concurrency} slots: a long task then
   * cannot hold up received activities or deliveries.  The inbox keeps
   * `tableName`, so messages queued there by an earlier version still run.
   * `false` puts every role in `tableName` behind one listener, as before
   * 0.4.0.  `true` by default.
   * @since 0.4.0
   */
  readonly separateRoles?: boolean;

  /**
   * How many messages a listener claims beyond its free handler slots.
   * They stay leased to the listener (its heartbeat renews them) and start
   * as soon as a handler finishes, without waiting for another
   * transaction; the deletions of handled messages are written in the same
   * transaction as the next claim.  When the listener stops, prefetched
   * messages are released at once for other workers.  `0` claims only for
   * free slots.  16 by default.
   * @since 0.2.0
   */
  readonly prefetch?: number;

  /**
   * How far a listener's prefetch may grow while it drains a backlog: when
   * a handler slot runs out of work although the last claim came back
   * full, or the next claim is due less than 10 ms after a full one, the
   * listener claims twice as far ahead, up to this many beyond
   * its slots, and returns to `prefetch` at the first claim that comes
   * back short.  Slow handlers and `prefetch: 0` never make it grow.  At
   * least `prefetch`; equal to it to keep the prefetch fixed.  1,024 by
   * default (or `prefetch` if that is larger).
   * @since 0.3.0
   */
  readonly maxPrefetch?: number;

  /**
   * How long a statement waits for another connection's write lock before
   * failing with `SQLITE_BUSY` (SQLite's `busy_timeout`).  The wait blocks
   * the event loop, since the runtimes' SQLite modules are synchronous.
   * Five seconds by default.
   */
  readonly busyTimeout?: DurationInput;
}

/** The options after validation, in milliseconds. */
export interface ResolvedQueueOptions {
  readonly path: string;
  readonly table: string;
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly concurrency: number;
  readonly prefetch: number;
  readonly maxPrefetch: number;
  readonly heartbeatMs: number;
  readonly busyTimeoutMs: number;
  readonly separateRoles: boolean;
}

/**
 * The default of {@link SqliteMessageQueueOptions.prefetch}, chosen from
 * `bench/lease-prefetch.ts` (see the manual's SQLite page).
 * @since 0.2.0
 */
const DEFAULT_SQLITE_PREFETCH = 16;
/**
 * The default of {@link SqliteMessageQueueOptions.concurrency}: enough
 * that a long handler does not keep the messages behind it waiting.
 */
const DEFAULT_SQLITE_CONCURRENCY = 4;
/** How far the prefetch grows while quick handlers drain a backlog. */
const DEFAULT_SQLITE_MAX_PREFETCH = 1_024;

/**
 * Validates {@link SqliteMessageQueueOptions} and fills in the defaults.
 * @throws {TypeError} When an option has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolveQueueOptions(options: SqliteMessageQueueOptions): ResolvedQueueOptions {
  if (options == null || typeof options !== "object") {
    throw new TypeError("SqliteMessageQueue needs an options object with a path.");
  }
  if (typeof options.path !== "string" || options.path === "" || options.path === ":memory:") {
    throw new TypeError(
      "The path option must be the path of a SQLite database file (not empty and not " +
        `":memory:", which could not be shared between connections); got ${
          JSON.stringify(options.path)
        }.`,
    );
  }
  const table = options.tableName ?? "fedwork_messages";
  quoteIdentifier(table, "tableName");
  const separateRoles = options.separateRoles ?? true;
  if (typeof separateRoles !== "boolean") {
    throw new TypeError(
      `The separateRoles option must be a boolean; got ${JSON.stringify(separateRoles)}.`,
    );
  }
  const lease = resolveLeaseOptions(options, {
    concurrency: DEFAULT_SQLITE_CONCURRENCY,
    prefetch: DEFAULT_SQLITE_PREFETCH,
    maxPrefetch: DEFAULT_SQLITE_MAX_PREFETCH,
    leaseMs: 30_000,
    pollMs: 1_000,
  });
  return {
    path: options.path,
    table,
    leaseMs: lease.leaseMs,
    pollMs: lease.pollMs,
    concurrency: lease.concurrency,
    prefetch: lease.prefetch,
    maxPrefetch: lease.maxPrefetch,
    heartbeatMs: lease.heartbeatMs,
    busyTimeoutMs: positiveDurationOption(options.busyTimeout, "busyTimeout", 5_000),
    separateRoles,
  };
}

/**
 * Options for {@link SqlitePubSub}.
 * @since 0.4.0
 */
export interface SqlitePubSubOptions {
  /**
   * The SQLite database file; created when it does not exist.  Every
   * process that should hear the others opens the same file (it may be the
   * queue's and the store's).  Required.
   */
  readonly path: string;

  /**
   * The table holding recent publications; created on first use.  Letters,
   * digits and underscores only.  `"fedwork_pubsub"` by default.
   */
  readonly tableName?: string;

  /**
   * How often a subscribed instance asks SQLite whether another connection
   * wrote to the file (`PRAGMA data_version`, which reads a counter and no
   * table), and reads the new publications when one did.  This is the
   * longest a payload published in another process waits, beyond the
   * commit.  50 milliseconds by default.
   */
  readonly pollInterval?: DurationInput;

  /**
   * How long a publication stays in the table for subscribers that have
   * not read it yet (a process whose event loop was blocked); older rows
   * are deleted by the next publish.  One minute by default.
   */
  readonly retention?: DurationInput;

  /**
   * How long a statement waits for another connection's write lock
   * (SQLite's `busy_timeout`).  Five seconds by default.
   */
  readonly busyTimeout?: DurationInput;
}

/** {@link SqlitePubSubOptions} after validation, in milliseconds. */
export interface ResolvedPubSubOptions {
  readonly path: string;
  readonly table: string;
  readonly pollMs: number;
  readonly retentionMs: number;
  readonly busyTimeoutMs: number;
}

/**
 * Validates {@link SqlitePubSubOptions} and fills in the defaults.
 * @throws {TypeError} When an option has the wrong type.
 * @throws {RangeError} When an option is out of range.
 */
export function resolvePubSubOptions(options: SqlitePubSubOptions): ResolvedPubSubOptions {
  if (options == null || typeof options !== "object") {
    throw new TypeError("SqlitePubSub needs an options object with a path.");
  }
  if (typeof options.path !== "string" || options.path === "" || options.path === ":memory:") {
    throw new TypeError(
      "The path option must be the path of a SQLite database file (not empty and not " +
        `":memory:", which other processes could not open); got ${JSON.stringify(options.path)}.`,
    );
  }
  const table = options.tableName ?? "fedwork_pubsub";
  quoteIdentifier(table, "tableName");
  return {
    path: options.path,
    table,
    pollMs: positiveDurationOption(options.pollInterval, "pollInterval", 50),
    retentionMs: positiveDurationOption(options.retention, "retention", 60_000),
    busyTimeoutMs: positiveDurationOption(options.busyTimeout, "busyTimeout", 5_000),
  };
}
