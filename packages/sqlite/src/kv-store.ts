import {
  type DurationInput,
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetManyEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import {
  configureConnection,
  openSqliteDatabase,
  runImmediateTransaction,
  type SqliteDatabase,
  type SqliteStatement,
} from "./driver.ts";
import {
  FEDIFY_SQLITE_HINTS,
  resolveConstructorArguments,
  type SqliteOpenDatabase,
} from "./constructor-arguments.ts";
import { quoteIdentifier } from "./identifier.ts";
import { jsonEqual } from "./json-equal.ts";
import { decodeKvKey, encodeKvKey, kvPrefixRange } from "./key-encoding.ts";
import { LazyConnection } from "./lazy-connection.ts";

/**
 * Options for {@link SqliteKvStore}.
 * @since 0.1.0
 */
export interface SqliteKvStoreOptions {
  /** The SQLite database file; created when it does not exist.  Required. */
  readonly path: string;

  /**
   * The table holding the entries; created on first use.  Letters, digits
   * and underscores only.  `"fedwork_kv"` by default.
   */
  readonly tableName?: string;

  /**
   * How long a statement waits for another connection's write lock
   * (SQLite's `busy_timeout`).  Five seconds by default.
   */
  readonly busyTimeout?: DurationInput;
}

// How many entries list() reads per statement, so that a large listing
// does not hold the event loop in one long synchronous call.
const LIST_PAGE_SIZE = 256;

// Expired rows are filtered out on every read and deleted by a sweep that
// runs with a write at most this often.
const SWEEP_INTERVAL_MS = 60_000;

interface Statements {
  readonly get: SqliteStatement;
  readonly upsert: SqliteStatement;
  readonly delete: SqliteStatement;
  readonly list: SqliteStatement;
  readonly sweep: SqliteStatement;
}

interface Connection {
  readonly database: SqliteDatabase;
  readonly statements: Statements;
}

/**
 * A {@link KvStore} in a SQLite database file, on the runtime's built-in
 * SQLite.  Keys are stored as the JSON text of the key array and values as
 * JSON text; entries with a TTL carry an expiry time, are never returned
 * after it and are deleted by an occasional sweep.  `cas()` runs in a
 * `BEGIN IMMEDIATE` transaction, so it is atomic across processes sharing
 * the file.
 *
 * The store opens its own connection on first use and
 * `[Symbol.asyncDispose]()` closes it.
 *
 * @example
 * ```ts
 * import { SqliteKvStore } from "@fedwork/sqlite";
 *
 * await using kv = new SqliteKvStore({ path: "fedwork.sqlite" });
 * await kv.set(["greeting", "en"], "hello", { ttl: { minutes: 5 } });
 * console.log(await kv.get(["greeting", "en"]));
 * ```
 * @since 0.1.0
 */
export class SqliteKvStore implements KvStore, AsyncDisposable {
  readonly #path: string;
  readonly #table: string;
  readonly #busyTimeoutMs: number;
  readonly #connection = new LazyConnection<Connection>("SqliteKvStore", () => this.#open());
  #lastSweep = 0;

  /**
   * Creates a store on a SQLite file.  Nothing is opened until the first
   * call; the table is created then if it does not exist.
   * @param options The file and table.
   * @throws {TypeError} When an option has the wrong type (its name is in
   *                     the message).
   * @throws {RangeError} When `busyTimeout` is not positive.
   * @since 0.1.0
   */
  constructor(options: SqliteKvStoreOptions);
  /**
   * Creates a store on the file of an open database, as `@fedify/sqlite`'s
   * `new SqliteKvStore(db, options?)` does.  The store opens a connection
   * of its own to that file (and closes it on dispose); the database
   * passed in is neither used nor closed.  An in-memory database is
   * refused.  Fedify's `initialized` option is accepted and changes
   * nothing.
   * @param database An open `node:sqlite` `DatabaseSync` or `bun:sqlite`
   *                 `Database` on a file.
   * @param options The table and busy timeout.
   * @throws {TypeError} When the first argument is neither a database nor
   *                     options, the database is in memory, or an option is
   *                     unknown or has the wrong type.
   * @throws {RangeError} When `busyTimeout` is not positive.
   * @since 0.4.0
   */
  constructor(
    database: SqliteOpenDatabase,
    options?: Omit<SqliteKvStoreOptions, "path"> & { readonly initialized?: boolean },
  );
  constructor(
    first: SqliteKvStoreOptions | SqliteOpenDatabase,
    second?: Omit<SqliteKvStoreOptions, "path"> & { readonly initialized?: boolean },
  ) {
    const options = resolveConstructorArguments<SqliteKvStoreOptions>(
      first,
      second,
      "new SqliteKvStore()",
      "new SqliteKvStore(db)",
    );
    if (options == null || typeof options.path !== "string" || options.path === "") {
      throw new TypeError(
        `The path option must be the path of a SQLite database file; got ${
          JSON.stringify(options?.path)
        }.`,
      );
    }
    assertKnownOptions(options, ["path", "tableName", "busyTimeout"], {
      where: "new SqliteKvStore()",
      hints: FEDIFY_SQLITE_HINTS,
    });
    this.#path = options.path;
    this.#table = quoteIdentifier(options.tableName ?? "fedwork_kv", "tableName");
    this.#busyTimeoutMs = options.busyTimeout === undefined
      ? 5_000
      : durationToMilliseconds(options.busyTimeout, "busyTimeout");
    if (this.#busyTimeoutMs <= 0) {
      throw new RangeError("The busyTimeout option must be a positive duration.");
    }
  }

  #connect(): Promise<Connection> {
    return this.#connection.get();
  }

  async #open(): Promise<Connection> {
    const database = await openSqliteDatabase(this.#path);
    const t = this.#table;
    const index = `"${t.slice(1, -1)}_expires"`;
    try {
      configureConnection(database, this.#busyTimeoutMs);
      database.exec(`
        CREATE TABLE IF NOT EXISTS ${t} (
          key TEXT PRIMARY KEY,
          value TEXT NOT NULL,
          expires INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS ${index} ON ${t} (expires) WHERE expires IS NOT NULL;
      `);
      const statements: Statements = {
        get: database.prepare(
          `SELECT value FROM ${t} WHERE key = ? AND (expires IS NULL OR expires > ?)`,
        ),
        upsert: database.prepare(
          `INSERT INTO ${t} (key, value, expires) VALUES (?, ?, ?)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
        ),
        delete: database.prepare(`DELETE FROM ${t} WHERE key = ?`),
        list: database.prepare(
          `SELECT key, value FROM ${t}
           WHERE key >= ? AND key > ? AND key < ? AND (expires IS NULL OR expires > ?)
           ORDER BY key LIMIT ${LIST_PAGE_SIZE}`,
        ),
        sweep: database.prepare(`DELETE FROM ${t} WHERE expires <= ?`),
      };
      return { database, statements };
    } catch (error) {
      database.close();
      throw error;
    }
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.1.0
   */
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const encoded = encodeKvKey(key);
    const { statements } = await this.#connect();
    const row = statements.get.get(encoded, Date.now());
    return row === undefined ? undefined : JSON.parse(row.value as string) as T;
  }

  /**
   * Reads several values in one synchronous pass over the prepared
   * statement of `get()`: SQLite runs in this process, so one call is what
   * saves the awaits, and a statement with a varying number of `?` would
   * be prepared again for every size.
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.3.0
   */
  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    const encoded = keys.map(encodeKvKey);
    const { statements } = await this.#connect();
    const now = Date.now();
    return encoded.map((name) => {
      const row = statements.get.get(name, now);
      return row === undefined ? undefined : JSON.parse(row.value as string) as T;
    });
  }

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live; forever when absent.
   * @throws {TypeError} When the value cannot be encoded as JSON.
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.1.0
   */
  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    const encoded = encodeKvKey(key);
    const text = encodeValue(value);
    const expires = expiryOf(options);
    const { statements } = await this.#connect();
    statements.upsert.run(encoded, text, expires);
    this.#maybeSweep(statements);
  }

  /**
   * Writes several values in one `BEGIN IMMEDIATE` transaction: one
   * commit (and one wait for the write lock) for all of them.
   * @param entries The writes; a later entry for the same key wins.
   * @throws {TypeError} When a value cannot be encoded as JSON (nothing is
   *                     written then).
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.3.0
   */
  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map((entry) =>
      [
        encodeKvKey(entry.key),
        encodeValue(entry.value),
        expiryOf(entry.options ?? {}),
      ] as const
    );
    const { database, statements } = await this.#connect();
    runImmediateTransaction(database, () => {
      for (const [key, text, expires] of rows) statements.upsert.run(key, text, expires);
    });
    this.#maybeSweep(statements);
  }

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.1.0
   */
  async delete(key: KvKey): Promise<void> {
    const encoded = encodeKvKey(key);
    const { statements } = await this.#connect();
    statements.delete.run(encoded);
  }

  /**
   * Lists the unexpired entries whose key starts with `prefix`, element by
   * element, in the order of their encoded keys.
   * @param prefix The key prefix; every entry when absent.
   * @returns The entries.
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.1.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const { start, end } = kvPrefixRange(prefix);
    let after = "";
    while (true) {
      const { statements } = await this.#connect();
      const rows = statements.list.all(start, after, end, Date.now());
      for (const row of rows) {
        yield { key: decodeKvKey(row.key as string), value: JSON.parse(row.value as string) };
      }
      if (rows.length < LIST_PAGE_SIZE) return;
      after = rows[rows.length - 1].key as string;
    }
  }

  /**
   * Atomically replaces the value at `key` with `newValue` if the current
   * (unexpired) value deeply equals `expectedValue`; `undefined` means
   * absent.  Runs in one `BEGIN IMMEDIATE` transaction.
   * @param key The key.
   * @param expectedValue The value expected to be there now.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   * @throws {TypeError} When `newValue` cannot be encoded as JSON.
   * @throws {SqliteClosedError} When the store was closed.
   * @since 0.1.0
   */
  async cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options: KvStoreSetOptions = {},
  ): Promise<boolean> {
    const encoded = encodeKvKey(key);
    const text = encodeValue(newValue);
    const expires = expiryOf(options);
    // Normalize through JSON so that the comparison sees what get() would.
    const expected = expectedValue === undefined
      ? undefined
      : JSON.parse(encodeValue(expectedValue));
    const { database, statements } = await this.#connect();
    return runImmediateTransaction(database, () => {
      const row = statements.get.get(encoded, Date.now());
      const current = row === undefined ? undefined : JSON.parse(row.value as string);
      if (current === undefined ? expected !== undefined : !jsonEqual(current, expected)) {
        return false;
      }
      statements.upsert.run(encoded, text, expires);
      return true;
    });
  }

  #maybeSweep(statements: Statements): void {
    const now = Date.now();
    if (now - this.#lastSweep < SWEEP_INTERVAL_MS) return;
    this.#lastSweep = now;
    try {
      statements.sweep.run(now);
    } catch {
      // Only housekeeping: reads ignore expired rows anyway.
    }
  }

  /**
   * Closes the store's connection.  Stored entries stay in the file.
   * @since 0.1.0
   */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#connection.closed) return;
    await this.#connection.close();
  }
}

function encodeValue(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) {
    throw new TypeError(`A KvStore value must be JSON-compatible; got ${typeof value}.`);
  }
  return text;
}

function expiryOf(options: KvStoreSetOptions): number | null {
  return options.ttl === undefined ? null : Date.now() + durationToMilliseconds(options.ttl, "ttl");
}
