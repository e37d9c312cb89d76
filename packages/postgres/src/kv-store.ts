import type {
  KvKey,
  KvStore,
  KvStoreListEntry,
  KvStoreSetManyEntry,
  KvStoreSetOptions,
} from "@fedwork/core";
import { durationToMilliseconds } from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import { getLogger } from "@logtape/logtape";
import type { Sql } from "postgres";
import { resolveClient } from "./client.ts";
import { PostgresClosedError } from "./errors.ts";
import { qualifiedName, quoteIdentifier, validateIdentifier } from "./identifiers.ts";
import { encodeJson } from "./json.ts";
import { createTables } from "./sql/table-setup.ts";

const logger = getLogger(["fedwork", "postgres"]);
const PREPARED = { prepare: true } as const;
// Expired rows are filtered out on every read; deleting them is only
// housekeeping, so it runs at most this often per store.
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Options for {@link PostgresKvStore}.
 * @since 0.1.0
 */
export interface PostgresKvStoreOptions {
  /** The table; a plain SQL name.  `"fedwork_kv"` by default. */
  readonly tableName?: string;
  /** The schema of the table; the connection's search path by default. */
  readonly schema?: string;
  /** `true` skips `CREATE TABLE IF NOT EXISTS` on first use.  `false` by default. */
  readonly initialized?: boolean;
}

/**
 * A {@link KvStore} on PostgreSQL: one table keyed by `text[]`, values in
 * `jsonb`, TTLs as an `expires` timestamp filtered out on read and pruned
 * now and then.  `cas()` is a single statement.
 *
 * Pass a connection URL to let the store own its client (closed by
 * `[Symbol.asyncDispose]()`), or a postgres.js `Sql` you own (left open).
 *
 * @example
 * ```ts
 * import { PostgresKvStore } from "@fedwork/postgres";
 *
 * await using kv = new PostgresKvStore("postgres://localhost/app");
 * await kv.set(["greeting"], "hello", { ttl: { minutes: 5 } });
 * console.log(await kv.get(["greeting"]));
 * ```
 * @since 0.1.0
 */
export class PostgresKvStore implements KvStore, AsyncDisposable {
  readonly #sql: Sql;
  readonly #ownsClient: boolean;
  readonly #table: string;
  readonly #create: string;
  #initialized: Promise<void> | undefined;
  #closed = false;
  #lastPrune = 0;
  #pruning: Promise<void> | undefined;

  /**
   * Creates a store.  Nothing is sent to PostgreSQL until first use.
   * @param client A postgres.js `Sql` (left open) or a connection URL (the
   *               store creates its own client and closes it on dispose).
   * @param options The table options.
   * @throws {TypeError} When a name option is not a plain SQL name.
   * @since 0.1.0
   */
  constructor(client: Sql | string | URL, options: PostgresKvStoreOptions = {}) {
    assertKnownOptions(options, ["tableName", "schema", "initialized"], {
      where: "new PostgresKvStore()",
    });
    const table = validateIdentifier(options.tableName ?? "fedwork_kv", "tableName", 54);
    const schema = options.schema === undefined
      ? undefined
      : validateIdentifier(options.schema, "schema");
    this.#table = qualifiedName(table, schema);
    const createSchema = schema == null
      ? ""
      : `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)};\n`;
    this.#create = `${createSchema}CREATE TABLE IF NOT EXISTS ${this.#table} (
  key text[] PRIMARY KEY,
  value jsonb NOT NULL,
  expires timestamptz
);
CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${table}_exp_idx`)} ON ${this.#table} (expires)
  WHERE expires IS NOT NULL;`;
    if (options.initialized === true) this.#initialized = Promise.resolve();
    ({ sql: this.#sql, ownsClient: this.#ownsClient } = resolveClient(
      client,
      "new PostgresKvStore()",
    ));
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   * @since 0.1.0
   */
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    await this.#ready();
    const rows = await this.#sql.unsafe(
      `SELECT value::text AS value FROM ${this.#table}
WHERE key = $1::text[] AND (expires IS NULL OR expires > now())`,
      [checkKey(key)],
      PREPARED,
    );
    return rows.length === 0 ? undefined : JSON.parse(rows[0].value) as T;
  }

  /**
   * Reads several values with one statement.
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @since 0.3.0
   */
  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    const checked = keys.map(checkKey);
    await this.#ready();
    // One parameter per key (keys of different lengths make no
    // rectangular text[][]): the planner then knows how many rows it looks
    // for and finds each through the primary key, where a set-returning
    // function's guess of 100 rows made it scan a small table whole.  A
    // batch's size picks the prepared statement, and batches are small.
    const rows = await this.#sql.unsafe(
      `SELECT key, value::text AS value FROM ${this.#table}
WHERE key IN (${checked.map((_, i) => `$${i + 1}::text[]`).join(", ")})
  AND (expires IS NULL OR expires > now())`,
      checked,
      PREPARED,
    );
    const found = new Map<string, T>();
    for (const row of rows) found.set(JSON.stringify(row.key), JSON.parse(row.value) as T);
    return checked.map((key) => found.get(JSON.stringify(key)));
  }

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live.
   * @since 0.1.0
   */
  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    const ttl = ttlMilliseconds(options);
    const json = encodeJson(value, "value");
    await this.#ready();
    await this.#sql.unsafe(
      `INSERT INTO ${this.#table} (key, value, expires)
VALUES ($1::text[], $2::text::jsonb, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
      [checkKey(key), json, ttl],
      PREPARED,
    );
    this.#maybePrune();
  }

  /**
   * Writes several values with one statement.
   * @param entries The writes; a later entry for the same key wins.
   * @throws {TypeError} When a value is not JSON-serializable or a `ttl`
   *                     is not a duration (nothing is written then).
   * @since 0.3.0
   */
  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // One INSERT may not touch a row twice: keep each key's last entry.
    const last = new Map<string, string>();
    for (const entry of entries) {
      const key = JSON.stringify(checkKey(entry.key));
      const ttl = ttlMilliseconds(entry.options ?? {});
      last.delete(key);
      last.set(key, `{"k":${key},"v":${encodeJson(entry.value, "value")},"t":${ttl}}`);
    }
    await this.#ready();
    await this.#sql.unsafe(
      `INSERT INTO ${this.#table} (key, value, expires)
SELECT ARRAY(SELECT jsonb_array_elements_text(e->'k')), e->'v',
  now() + (e->>'t')::bigint * interval '1 millisecond'
FROM jsonb_array_elements($1::text::jsonb) AS e
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
      [`[${[...last.values()].join(",")}]`],
      PREPARED,
    );
    this.#maybePrune();
  }

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   * @since 0.1.0
   */
  async delete(key: KvKey): Promise<void> {
    await this.#ready();
    await this.#sql.unsafe(
      `DELETE FROM ${this.#table} WHERE key = $1::text[]`,
      [checkKey(key)],
      PREPARED,
    );
  }

  /**
   * Lists the live entries whose key starts with `prefix`, in key order.
   * @param prefix The key prefix; every entry when omitted.
   * @returns The entries.
   * @since 0.1.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    await this.#ready();
    const rows = prefix == null
      ? await this.#sql.unsafe(
        `SELECT key, value::text AS value FROM ${this.#table}
WHERE expires IS NULL OR expires > now() ORDER BY key`,
        [],
        PREPARED,
      )
      : await this.#sql.unsafe(
        // The lower bound lets the primary key index narrow the scan; the
        // slice compares whole elements, so ["ab"] is not under ["a"].
        `SELECT key, value::text AS value FROM ${this.#table}
WHERE key >= $1::text[] AND key[1:cardinality($1::text[])] = $1::text[]
  AND (expires IS NULL OR expires > now())
ORDER BY key`,
        [checkKey(prefix)],
        PREPARED,
      );
    for (const row of rows) {
      yield { key: row.key as unknown as KvKey, value: JSON.parse(row.value) };
    }
  }

  /**
   * Atomically replaces the value at `key` when the current value deeply
   * equals `expectedValue` (`undefined`: absent or expired), in one
   * statement.  Objects compare as `jsonb`: key order does not matter.
   * @param key The key.
   * @param expectedValue The value expected to be there now.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   * @since 0.1.0
   */
  async cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options: KvStoreSetOptions = {},
  ): Promise<boolean> {
    const ttl = ttlMilliseconds(options);
    const json = encodeJson(newValue, "newValue");
    await this.#ready();
    const rows = expectedValue === undefined
      ? await this.#sql.unsafe(
        `INSERT INTO ${this.#table} AS t (key, value, expires)
VALUES ($1::text[], $2::text::jsonb, now() + $3::bigint * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires
WHERE t.expires IS NOT NULL AND t.expires <= now()
RETURNING 1`,
        [checkKey(key), json, ttl],
        PREPARED,
      )
      : await this.#sql.unsafe(
        `UPDATE ${this.#table}
SET value = $2::text::jsonb, expires = now() + $3::bigint * interval '1 millisecond'
WHERE key = $1::text[] AND value = $4::text::jsonb AND (expires IS NULL OR expires > now())
RETURNING 1`,
        [checkKey(key), json, ttl, encodeJson(expectedValue, "expectedValue")],
        PREPARED,
      );
    this.#maybePrune();
    return rows.length > 0;
  }

  /**
   * Drops the table and every entry in it.
   * @returns Resolves when the table is gone.
   * @since 0.1.0
   */
  async drop(): Promise<void> {
    this.#checkOpen();
    await this.#sql.unsafe(`DROP TABLE IF EXISTS ${this.#table}`);
    this.#initialized = undefined;
  }

  /**
   * Closes the client if the store created it.  Data is kept.
   * @returns Resolves when closed.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pruning;
    if (this.#ownsClient) await this.#sql.end({ timeout: 5 });
  }

  #maybePrune(): void {
    const now = Date.now();
    if (this.#pruning != null || now - this.#lastPrune < PRUNE_INTERVAL_MS) return;
    this.#lastPrune = now;
    this.#pruning = this.#sql.unsafe(
      `DELETE FROM ${this.#table} WHERE expires <= now()`,
      [],
      PREPARED,
    ).then(() => {}, (error) => {
      logger.warn("Pruning expired entries failed: {error}", { error });
    }).finally(() => {
      this.#pruning = undefined;
    });
  }

  #checkOpen(): void {
    if (this.#closed) throw new PostgresClosedError("PostgresKvStore");
  }

  #ready(): Promise<void> {
    this.#checkOpen();
    this.#initialized ??= createTables(this.#sql, this.#table, this.#create).catch((error) => {
      this.#initialized = undefined;
      throw error;
    });
    return this.#initialized;
  }
}

function checkKey(key: KvKey): string[] {
  if (!Array.isArray(key) || key.length === 0 || !key.every((k) => typeof k === "string")) {
    throw new TypeError("A key must be a non-empty array of strings.");
  }
  return [...key];
}

function ttlMilliseconds(options: KvStoreSetOptions): number | null {
  return options.ttl === undefined ? null : durationToMilliseconds(options.ttl, "ttl");
}
