// The SQL behind SqliteMessageQueue, in one place so that the README's
// description of the table can be checked against it.
import type { SqliteDatabase, SqliteStatement } from "../driver.ts";

/**
 * Returns the statements that create the queue table and its indexes when
 * they do not exist yet.
 * @param table The validated table name, unquoted.
 */
export function queueSchemaSql(table: string): string {
  return `
CREATE TABLE IF NOT EXISTS "${table}" (
  id INTEGER PRIMARY KEY,
  message TEXT NOT NULL,
  ordering_key TEXT,
  ready_at INTEGER NOT NULL,
  lease_until INTEGER,
  lease_owner TEXT,
  dedup_key TEXT,
  dedup_until INTEGER,
  priority INTEGER NOT NULL DEFAULT 0,
  deliveries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS "${table}_ready" ON "${table}" (ready_at, id);
CREATE INDEX IF NOT EXISTS "${table}_ordering_key" ON "${table}" (ordering_key, id)
  WHERE ordering_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS "${table}_lease" ON "${table}" (lease_until)
  WHERE lease_until IS NOT NULL;
`;
}

/**
 * Adds the deduplication columns to a table created before they existed
 * (Fedwork 0.1), then indexes them.  Runs under the write lock so that two
 * processes opening the file at once do not both add the columns.
 * @param database The connection.
 * @param table The validated table name, unquoted.
 * @param transaction Runs its body in a `BEGIN IMMEDIATE` transaction.
 * @since 0.2.0
 */
export function migrateDeduplicationColumns(
  database: SqliteDatabase,
  table: string,
  transaction: (body: () => void) => void,
): void {
  const hasColumn = () =>
    database.prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = 'dedup_key'`)
      .get(table) != null;
  if (!hasColumn()) {
    transaction(() => {
      if (hasColumn()) return;
      database.exec(`ALTER TABLE "${table}" ADD COLUMN dedup_key TEXT`);
      database.exec(`ALTER TABLE "${table}" ADD COLUMN dedup_until INTEGER`);
    });
  }
  database.exec(
    `CREATE INDEX IF NOT EXISTS "${table}_dedup" ON "${table}" (dedup_key, dedup_until)
       WHERE dedup_key IS NOT NULL`,
  );
}

/**
 * Adds the `priority` column to a table created before it existed (Fedwork
 * 0.2), then indexes it, like {@link migrateDeduplicationColumns}.  Rows
 * already queued get priority 0.
 * @param database The connection.
 * @param table The validated table name, unquoted.
 * @param transaction Runs its body in a `BEGIN IMMEDIATE` transaction.
 * @since 0.3.0
 */
export function migratePriorityColumn(
  database: SqliteDatabase,
  table: string,
  transaction: (body: () => void) => void,
): void {
  const hasColumn = () =>
    database.prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = 'priority'`)
      .get(table) != null;
  if (!hasColumn()) {
    transaction(() => {
      if (hasColumn()) return;
      database.exec(`ALTER TABLE "${table}" ADD COLUMN priority INTEGER NOT NULL DEFAULT 0`);
    });
  }
  // The claim walks this index in claim order (highest priority, then
  // ready time) and stops after the batch, so a deep backlog of delayed
  // or leased rows at the front is all it may have to skip.
  database.exec(
    `CREATE INDEX IF NOT EXISTS "${table}_claim" ON "${table}" (priority DESC, ready_at, id)`,
  );
}

/**
 * Adds the `deliveries` column (the hand-out count) to a table created
 * before it existed (Fedwork 0.3), like {@link migrateDeduplicationColumns}.
 * Rows already queued start at 0.
 * @param database The connection.
 * @param table The validated table name, unquoted.
 * @param transaction Runs its body in a `BEGIN IMMEDIATE` transaction.
 * @since 0.4.0
 */
export function migrateDeliveriesColumn(
  database: SqliteDatabase,
  table: string,
  transaction: (body: () => void) => void,
): void {
  const hasColumn = () =>
    database.prepare(`SELECT 1 FROM pragma_table_info(?) WHERE name = 'deliveries'`)
      .get(table) != null;
  if (hasColumn()) return;
  transaction(() => {
    if (hasColumn()) return;
    database.exec(`ALTER TABLE "${table}" ADD COLUMN deliveries INTEGER NOT NULL DEFAULT 0`);
  });
}

/** The prepared statements of one queue connection. */
export interface QueueStatements {
  /** (message, ordering_key, ready_at, priority) */
  readonly insert: SqliteStatement;
  /** (message, ordering_key, ready_at, dedup_key, dedup_until, priority) */
  readonly insertDeduplicated: SqliteStatement;
  /** (dedup_key, now) → a row while a message holds the key */
  readonly deduplicationHeld: SqliteStatement;
  /**
   * (lease_until, lease_owner, now, now, limit) → id, message, ready_at,
   * priority, deliveries (after this claim's increment)
   */
  readonly claim: SqliteStatement;
  /** (lease_until, JSON array of ids, lease_owner) */
  readonly extendLeases: SqliteStatement;
  /**
   * (JSON array of ids, lease_owner): acknowledges handled rows that
   * `lease_owner` still holds.
   */
  readonly deleteMany: SqliteStatement;
  /**
   * (ready_at, JSON array of ids, lease_owner): hands back failed rows,
   * due again at `ready_at`, where `lease_owner` still holds them.
   */
  readonly handBack: SqliteStatement;
  /**
   * (JSON array of ids, lease_owner): drops the leases of prefetched rows
   * that never ran, keeping their place in line and taking back the
   * claim's hand-out count.
   */
  readonly release: SqliteStatement;
  /**
   * (message or null to keep it, ready_at, id, lease_owner): stores a new
   * version, resets its hand-out count and releases the lease, if
   * `lease_owner` still holds it.
   */
  readonly redeliver: SqliteStatement;
  /** (now, now, JSON array of the ids whose leases this listener renews) → at */
  readonly nextWake: SqliteStatement;
  /** (now, now, now) → queued, ready, delayed */
  readonly depth: SqliteStatement;
}

/**
 * Prepares the queue's statements once per connection.
 * @param database The connection.
 * @param table The validated table name, unquoted.
 */
export function prepareQueueStatements(database: SqliteDatabase, table: string): QueueStatements {
  const t = `"${table}"`;
  return {
    insert: database.prepare(
      `INSERT INTO ${t} (message, ordering_key, ready_at, priority) VALUES (?, ?, ?, ?)`,
    ),
    insertDeduplicated: database.prepare(
      `INSERT INTO ${t} (message, ordering_key, ready_at, dedup_key, dedup_until, priority)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    // A key is held by a row still in the table (not yet acknowledged:
    // waiting, running or waiting for its retry in place) whose TTL has not
    // run out.
    deduplicationHeld: database.prepare(
      `SELECT 1 FROM ${t} WHERE dedup_key = ? AND dedup_until > ? LIMIT 1`,
    ),
    // A row is claimable when it is due, not leased (or its lease ran out:
    // crash recovery), and, if it has an ordering key, no row enqueued
    // before it with the same key is still in the table.  Rows leave the
    // table only when acknowledged, so this also holds back a key while its
    // earlier message is delayed, being handled by any process or waiting
    // to be handed out again (a failed or redelivered one).  Higher
    // priorities first; the ordering-key condition keeps a key's rows in
    // enqueue order whatever their priorities.
    //
    // The claim counts the hand-out in the same statement, before any
    // handler runs: a worker killed by the message has still counted it.
    claim: database.prepare(
      `UPDATE ${t} SET lease_until = ?, lease_owner = ?, deliveries = deliveries + 1
       WHERE id IN (
         SELECT m.id FROM ${t} AS m
         WHERE m.ready_at <= ?
           AND (m.lease_until IS NULL OR m.lease_until <= ?)
           AND (m.ordering_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM ${t} AS e
             WHERE e.ordering_key = m.ordering_key AND e.id < m.id))
         ORDER BY m.priority DESC, m.ready_at, m.id
         LIMIT ?)
       RETURNING id, message, ready_at, priority, deliveries`,
    ),
    extendLeases: database.prepare(
      `UPDATE ${t} SET lease_until = ?
       WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ?`,
    ),
    // Guarded by the owner like the statements below: a listener whose
    // lease ran out must not delete a row another worker has since
    // claimed, which would lose it if that worker then died.
    deleteMany: database.prepare(
      `DELETE FROM ${t} WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ?`,
    ),
    handBack: database.prepare(
      `UPDATE ${t} SET ready_at = ?, lease_until = NULL, lease_owner = NULL
       WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ?`,
    ),
    release: database.prepare(
      `UPDATE ${t} SET lease_until = NULL, lease_owner = NULL, deliveries = max(deliveries - 1, 0)
       WHERE id IN (SELECT value FROM json_each(?)) AND lease_owner = ?`,
    ),
    // The row keeps its id, so that its ordering key stays held: later rows
    // with the key wait until this one is acknowledged.  Guarded by the
    // owner, so that a lease that ran out and was taken by another worker is
    // not overwritten.
    redeliver: database.prepare(
      `UPDATE ${t}
       SET message = coalesce(?, message), ready_at = ?, lease_until = NULL, lease_owner = NULL,
         deliveries = 0
       WHERE id = ? AND lease_owner = ?`,
    ),
    // The next moment something may become claimable without anyone
    // telling us: a delay running out, or a lease expiring that no running
    // handler renews (another worker's, or one of ours whose handler
    // failed and whose release did not get through).
    nextWake: database.prepare(
      `SELECT min(at) AS at FROM (
         SELECT min(ready_at) AS at FROM ${t} WHERE ready_at > ?
         UNION ALL
         SELECT min(lease_until) AS at FROM ${t}
         WHERE lease_until > ? AND id NOT IN (SELECT value FROM json_each(?)))`,
    ),
    depth: database.prepare(
      `SELECT count(*) AS queued,
         coalesce(sum(ready_at <= ? AND (lease_until IS NULL OR lease_until <= ?)), 0) AS ready,
         coalesce(sum(ready_at > ?), 0) AS delayed
       FROM ${t}`,
    ),
  };
}
