import type { DurationInput } from "@fedwork/core";

/**
 * Options for `PostgresMessageQueue`.
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
   * How many messages a listener claims beyond its free handler slots.
   * They stay leased to the listener (its heartbeat renews them) and start
   * as soon as a handler finishes, without a round trip; the deletions of
   * handled messages ride on the next claim statement.  When the listener
   * stops, prefetched messages are released at once for other workers.
   * Prefetching never breaks ordering keys: only the oldest message of a
   * key can be claimed.  `0` claims only for free slots.  16 by default.
   * @since 0.2.0
   */
  readonly prefetch?: number;
  /**
   * How far a listener's prefetch may grow while it drains a backlog.
   * When its handlers use up the prefetched messages before the next claim
   * comes back (a handler slot waits for PostgreSQL) and that claim comes
   * back full, or the next claim is due less than 10 ms after a full one,
   * the listener claims twice as far ahead, up to this many beyond its
   * slots; a claim that comes back short returns it to
   * `prefetch`.  Quick handlers then drain a backlog with a few large
   * claims instead of many small ones; slow handlers, and `prefetch: 0`,
   * never make it grow.  At least `prefetch`; equal to it to keep the
   * prefetch fixed.  1,024 by default (or `prefetch` if that is larger).
   * @since 0.3.0
   */
  readonly maxPrefetch?: number;
  /**
   * Set to `true` when the table already exists (e.g. created by a
   * migration) to skip `CREATE TABLE IF NOT EXISTS` on first use.  `false`
   * by default.
   */
  readonly initialized?: boolean;
  /**
   * Whether a listener's claims and acknowledgements wait until PostgreSQL
   * has flushed them to disk.  `false` by default: the listener's own
   * statements (claims, acknowledgements, hand-backs after a failure,
   * releases, lease renewals) turn `synchronous_commit` off for their own
   * transaction, so a claim round trip does not wait for a disk flush
   * (about a quarter off the pickup latency, and a few percent more
   * throughput, on the benchmark machine).  Enqueues and redeliveries
   * (retries) always wait.  Nothing is lost either way: should the
   * PostgreSQL server itself crash (not a worker), the last fraction of a
   * second of claims and acknowledgements may be undone, and those
   * messages are handed out again, as after a worker that died before its
   * acknowledgement was sent (at-least-once delivery).  Set `true` to have
   * no message run twice because of a server crash.
   * @since 0.4.0
   */
  readonly synchronousClaims?: boolean;
}
