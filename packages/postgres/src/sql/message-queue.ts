// The SQL text of PostgresMessageQueue, built once per instance from the
// validated table name.  Every statement is a single round trip; the
// queries are sent as prepared statements.
import { qualifiedName, quoteIdentifier } from "../identifiers.ts";

/** The statements one {@link PostgresMessageQueue} runs. */
export interface MessageQueueStatements {
  /** DDL creating the table and its indexes; idempotent. */
  readonly create: string;
  /** DROP TABLE. */
  readonly drop: string;
  /** $1 JSON text, $2 ordering key, $3 delay ms, $4 channel, $5 priority. */
  readonly enqueue: string;
  /**
   * $1 JSON texts (text[]), $2 ordering key, $3 delay ms, $4 channel, $5
   * priority.
   */
  readonly enqueueMany: string;
  /**
   * $1 deduplication key: frees it from a row whose TTL ran out (the row
   * itself stays queued).  Run in the transaction of `enqueueDeduplicated`.
   */
  readonly expireDeduplication: string;
  /**
   * $1 JSON text, $2 ordering key, $3 delay ms, $4 channel, $5 deduplication
   * key, $6 TTL ms, $7 priority.  Returns one row when the message was added, none when
   * a row holds the key.
   */
  readonly enqueueDeduplicated: string;
  /**
   * $1 how many, $2 lease ms, $3 lease owner (uuid).  Returns id, message
   * (JSON text), keyed, priority, deliveries (after this claim's
   * increment).
   */
  readonly claim: string;
  /**
   * Like `claim`, also deleting $4 (bigint[]), handled rows without an
   * ordering key that the owner $3 still holds, in the same round trip.
   */
  readonly acknowledgeAndClaim: string;
  /** $1 ids (bigint[]), $2 channel, $3 lease owner (uuid). */
  readonly acknowledge: string;
  /** $1 ids (bigint[]), $2 lease ms, $3 lease owner (uuid). */
  readonly heartbeat: string;
  /**
   * $1 ids (bigint[]), $2 delay ms, $3 lease owner (uuid), $4 channel: hands
   * back rows whose handlers failed, due again after the delay, where the
   * owner still holds them.
   */
  readonly handBack: string;
  /**
   * $1 ids (bigint[]), $2 lease owner (uuid), $3 channel: drops the leases
   * of prefetched rows that never ran, keeping their due time and taking
   * back the claim's hand-out count.
   */
  readonly release: string;
  /**
   * $1 id, $2 new JSON text, $3 delay ms, $4 lease
   * owner (uuid), $5 channel; resets the hand-out count.  Returns one row
   * when the owner still held the lease and the row was updated, none
   * otherwise.
   */
  readonly redeliver: string;
  /**
   * $1 ids whose leases this listener renews (bigint[]).  Returns wait_ms
   * (or null) and claimable: whether a row not on $1 is claimable now
   * (one a claim skipped because another transaction held its lock).
   */
  readonly nextWake: string;
  /** Returns queued, ready, delayed. */
  readonly depth: string;
}

/**
 * A condition that holds and turns `synchronous_commit` off for the
 * transaction of the statement it is in: a one-time filter (an
 * uncorrelated subquery), evaluated once when the statement starts, so a
 * single-statement transaction commits without waiting for its WAL flush.
 * `SET LOCAL` would need a transaction block, and so two round trips more.
 */
const ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) = 'off'";

/**
 * Builds the statements for a queue table.
 * @param table The validated table name.
 * @param schema The validated schema name, if any.
 * @param options `synchronousClaims`: whether the listener's statements
 *                (claims, acknowledgements, hand-backs, releases, lease
 *                renewals) wait for their commit to be flushed; when not,
 *                they turn `synchronous_commit` off for themselves.
 *                Enqueues and redeliveries always wait.
 * @returns The statements.
 */
export function buildMessageQueueStatements(
  table: string,
  schema?: string,
  options: { readonly synchronousClaims?: boolean } = {},
): MessageQueueStatements {
  const t = qualifiedName(table, schema);
  /** Appended to a listener statement's WHERE clause. */
  const asyncCommit = options.synchronousClaims === true ? "" : `\n  AND ${ASYNC_COMMIT}`;
  const index = (suffix: string) => quoteIdentifier(`${table}_${suffix}`);
  const createSchema = schema == null
    ? ""
    : `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)};\n`;
  return {
    create: `${createSchema}CREATE TABLE IF NOT EXISTS ${t} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message json NOT NULL,
  ordering_key text,
  due_at timestamptz NOT NULL DEFAULT now(),
  locked_until timestamptz,
  lease_owner uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  dedup_key text,
  dedup_until timestamptz,
  priority smallint NOT NULL DEFAULT 0,
  deliveries integer NOT NULL DEFAULT 0
);
${addLeaseOwner(t)}
${addDeduplicationColumns(t)}
${addPriorityColumn(t)}
${addDeliveriesColumn(t)}
CREATE UNIQUE INDEX IF NOT EXISTS ${index("dup_idx")} ON ${t} (dedup_key)
  WHERE dedup_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${index("due_idx")} ON ${t} (due_at, id);
CREATE INDEX IF NOT EXISTS ${index("key_idx")} ON ${t} (ordering_key, id)
  WHERE ordering_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${index("claim_idx")} ON ${t} (priority DESC, id);`,
    drop: `DROP TABLE IF EXISTS ${t}`,
    // NOTIFY is delivered on commit, i.e. only once the row is visible.
    enqueue: `WITH inserted AS (
  INSERT INTO ${t} (message, ordering_key, due_at, priority)
  VALUES ($1::text::json, $2::text, now() + $3::bigint * interval '1 millisecond',
    $5::smallint)
  RETURNING id
)
SELECT pg_notify($4::text, '') FROM inserted`,
    enqueueMany: `WITH inserted AS (
  INSERT INTO ${t} (message, ordering_key, due_at, priority)
  SELECT m.message::json, $2::text, now() + $3::bigint * interval '1 millisecond',
    $5::smallint
  FROM unnest($1::text[]) WITH ORDINALITY AS m(message, position)
  ORDER BY m.position
  RETURNING id
)
SELECT pg_notify($4::text, '') FROM (SELECT 1 FROM inserted LIMIT 1) AS any_inserted`,
    expireDeduplication: `UPDATE ${t} SET dedup_key = NULL
WHERE dedup_key = $1::text AND dedup_until <= now()`,
    // The unique index on dedup_key makes a concurrent insert of the same
    // key wait for this transaction and then do nothing: one message per
    // key, across every process.  The key is freed when its row is
    // acknowledged (deleted), or by expireDeduplication once its TTL ran out.
    enqueueDeduplicated: `WITH inserted AS (
  INSERT INTO ${t} (message, ordering_key, due_at, dedup_key, dedup_until, priority)
  VALUES ($1::text::json, $2::text, now() + $3::bigint * interval '1 millisecond',
    $5::text, now() + $6::bigint * interval '1 millisecond', $7::smallint)
  ON CONFLICT (dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
  RETURNING id
)
SELECT pg_notify($4::text, '') FROM inserted`,
    // A row is claimable when it is due and not in flight (or its lease ran
    // out: its worker is presumed dead).  A row with an ordering key is
    // claimable only when it is the oldest row with that key, so same-key
    // rows run one at a time and in enqueue order, across processes; a row
    // waiting to be handed out again (failed or redelivered) keeps its id
    // and so keeps holding its key.  Higher priorities first: the claim
    // walks claim_idx in that order, and the ordering-key condition keeps a
    // key's rows in enqueue order whatever their priorities.
    claim: claimStatement(t, "WITH ", asyncCommit),
    // The DELETE runs even though nothing references it.  All parts of the
    // statement share one snapshot, so the deleted rows are excluded from
    // the claim explicitly.  Only unkeyed rows are acknowledged this way:
    // a keyed successor would not be claimable in this snapshot, and
    // other listeners must be notified (see acknowledge).
    // Acknowledgements are guarded by the owner: a listener whose lease ran
    // out must not delete a row another worker has since claimed (it would
    // be lost if that worker died).
    acknowledgeAndClaim: claimStatement(
      t,
      `WITH deleted AS (
  DELETE FROM ${t} WHERE id = ANY($4::bigint[]) AND lease_owner = $3::uuid
),
`,
      `\n    AND NOT (c.id = ANY($4::bigint[]))${asyncCommit}`,
    ),
    // Deleting a keyed row may unblock the next row with that key in
    // another process, so listeners are told.
    acknowledge: `WITH deleted AS (
  DELETE FROM ${t} WHERE id = ANY($1::bigint[]) AND lease_owner = $3::uuid${asyncCommit}
  RETURNING ordering_key
)
SELECT pg_notify($2::text, '')
FROM (SELECT 1 FROM deleted WHERE ordering_key IS NOT NULL LIMIT 1) AS keyed`,
    // Only rows this listener still holds: not those it redelivered or
    // released, nor those whose lease ran out and another worker took.
    heartbeat: `UPDATE ${t} SET locked_until = now() + $2::bigint * interval '1 millisecond'
WHERE id = ANY($1::bigint[]) AND lease_owner = $3::uuid${asyncCommit}`,
    // Both keep the rows' ids (and so their ordering keys held) and notify,
    // so that other listeners re-arm their timers or take the rows.
    handBack: `WITH handed AS (
  UPDATE ${t}
  SET due_at = now() + $2::bigint * interval '1 millisecond', locked_until = NULL,
    lease_owner = NULL
  WHERE id = ANY($1::bigint[]) AND lease_owner = $3::uuid${asyncCommit}
  RETURNING 1
)
SELECT pg_notify($4::text, '') FROM (SELECT 1 FROM handed LIMIT 1) AS any_handed`,
    release: `WITH released AS (
  UPDATE ${t} SET locked_until = NULL, lease_owner = NULL,
    deliveries = greatest(deliveries - 1, 0)
  WHERE id = ANY($1::bigint[]) AND lease_owner = $2::uuid${asyncCommit}
  RETURNING 1
)
SELECT pg_notify($3::text, '') FROM (SELECT 1 FROM released LIMIT 1) AS any_released`,
    // The row keeps its id, so that its ordering key stays held: later rows
    // with the key wait until this one is acknowledged.  Guarded by the
    // owner, so that a lease that ran out and was taken by another worker is
    // not overwritten.  The notification lets idle listeners arm their
    // timers for the new due time.
    redeliver: `WITH redelivered AS (
  UPDATE ${t}
  SET message = coalesce($2::text::json, message),
    due_at = now() + $3::bigint * interval '1 millisecond',
    locked_until = NULL,
    lease_owner = NULL,
    deliveries = 0
  WHERE id = $1::bigint AND lease_owner = $4::uuid
  RETURNING 1
)
SELECT pg_notify($5::text, '') FROM redelivered`,
    // claimable has the claim's conditions, so that a keyed row waiting
    // behind a running one does not count.
    nextWake: `SELECT ceil(extract(epoch FROM (least(
  min(due_at) FILTER (WHERE due_at > now() AND locked_until IS NULL),
  min(locked_until) FILTER (WHERE locked_until >= now() AND NOT (id = ANY($1::bigint[])))
) - clock_timestamp())) * 1000)::float8 AS wait_ms,
  EXISTS (
    SELECT 1 FROM ${t} AS c
    WHERE ${claimableCondition(t)}
      AND NOT (c.id = ANY($1::bigint[]))
  ) AS claimable
FROM ${t}`,
    depth: `SELECT count(*)::int AS queued,
  count(*) FILTER (
    WHERE due_at <= now() AND (locked_until IS NULL OR locked_until < now())
  )::int AS ready,
  count(*) FILTER (WHERE due_at > now() AND locked_until IS NULL)::int AS delayed
FROM ${t}`,
  };
}

/**
 * Adds the `lease_owner` column to a table created before it existed
 * (Fedwork 0.1).  The catalog is checked first because `ALTER TABLE` takes
 * an exclusive lock on the table even when the column is already there.
 * @param table The quoted, qualified table name (plain SQL names only, so
 *              it can be written into a string literal as is).
 */
function addLeaseOwner(table: string): string {
  return `DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = '${table}'::regclass AND attname = 'lease_owner' AND NOT attisdropped
  ) THEN
    ALTER TABLE ${table} ADD COLUMN lease_owner uuid;
  END IF;
END
$$;`;
}

/**
 * Adds the `dedup_key` and `dedup_until` columns to a table created before
 * they existed (Fedwork 0.1), checking the catalog first like
 * {@link addLeaseOwner}.
 * @param table The quoted, qualified table name.
 */
function addDeduplicationColumns(table: string): string {
  return `DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = '${table}'::regclass AND attname = 'dedup_key' AND NOT attisdropped
  ) THEN
    ALTER TABLE ${table} ADD COLUMN dedup_key text, ADD COLUMN dedup_until timestamptz;
  END IF;
END
$$;`;
}

/**
 * Adds the `priority` column to a table created before it existed (Fedwork
 * 0.2), checking the catalog first like {@link addLeaseOwner}.  A column
 * with a constant default is added without rewriting the table; queued rows
 * get priority 0.
 * @param table The quoted, qualified table name.
 */
function addPriorityColumn(table: string): string {
  return `DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = '${table}'::regclass AND attname = 'priority' AND NOT attisdropped
  ) THEN
    ALTER TABLE ${table} ADD COLUMN priority smallint NOT NULL DEFAULT 0;
  END IF;
END
$$;`;
}

/**
 * Adds the `deliveries` column (the hand-out count) to a table created
 * before it existed (Fedwork 0.3), checking the catalog first like
 * {@link addLeaseOwner}; queued rows start at 0.
 * @param table The quoted, qualified table name.
 */
function addDeliveriesColumn(table: string): string {
  return `DO $$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_attribute
    WHERE attrelid = '${table}'::regclass AND attname = 'deliveries' AND NOT attisdropped
  ) THEN
    ALTER TABLE ${table} ADD COLUMN deliveries integer NOT NULL DEFAULT 0;
  END IF;
END
$$;`;
}

/**
 * When the row `c` of `table` is claimable: due, not leased (or its lease
 * ran out), and the oldest row of its ordering key.
 */
function claimableCondition(table: string): string {
  return `c.due_at <= now()
    AND (c.locked_until IS NULL OR c.locked_until < now())
    AND (c.ordering_key IS NULL OR NOT EXISTS (
      SELECT 1 FROM ${table} AS e WHERE e.ordering_key = c.ordering_key AND e.id < c.id
    ))`;
}

/**
 * The claim statement: leases up to `$1` claimable rows for `$2`
 * milliseconds to the owner `$3` and returns them, counting the hand-out
 * in the same statement (before any handler runs, so a worker killed by
 * the message has still counted it).  `prefix` opens the WITH clause (and may
 * add CTEs before `claimable`); `extraCondition` narrows the candidates.
 */
function claimStatement(table: string, prefix: string, extraCondition: string): string {
  return `${prefix}claimable AS (
  SELECT c.id FROM ${table} AS c
  WHERE ${claimableCondition(table)}${extraCondition}
  ORDER BY c.priority DESC, c.id
  LIMIT $1::int
  FOR UPDATE SKIP LOCKED
)
UPDATE ${table} AS q
SET locked_until = now() + $2::bigint * interval '1 millisecond', lease_owner = $3::uuid,
  deliveries = q.deliveries + 1
FROM claimable WHERE q.id = claimable.id
RETURNING q.id::text AS id, q.message::text AS message, q.ordering_key IS NOT NULL AS keyed,
  q.priority::int AS priority, q.deliveries AS deliveries`;
}
