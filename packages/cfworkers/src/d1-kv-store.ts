import {
  durationToMilliseconds,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetManyEntry,
  type KvStoreSetOptions,
} from "@fedwork/core";
import { assertKnownOptions } from "@fedwork/core/queue-kit";
import type { WorkersD1Database } from "./bindings.ts";

/**
 * Options for {@link D1KvStore}.
 * @since 0.3.0
 */
export interface D1KvStoreOptions {
  /**
   * The table the store keeps its entries in; created when first used.
   * Letters, digits and underscores, not starting with a digit.
   * `"fedwork_kv"` by default.
   */
  readonly table?: string;
}

/** One row of the table. */
interface Row {
  readonly key: string;
  readonly value: string;
  readonly expires: number | null;
}

/** How many rows one page of `list()` reads. */
const LIST_PAGE_SIZE = 100;
// The most parameters D1 binds to one statement.
const D1_MAX_PARAMETERS = 100;

const WHERE = "new D1KvStore()";

/**
 * A {@link KvStore} on a Cloudflare D1 database binding, with an atomic
 * `cas()`: what {@link WorkersKvStore} cannot offer.  D1 is SQLite with one
 * primary, so a write is seen by every later read and a compare-and-swap
 * is one conditional `UPDATE` (or `INSERT`) that two Workers cannot both
 * win.  Use it where Fedwork needs `cas()` on Workers: task deduplication,
 * schedules, batches.  Each call is a round trip to the database, slower
 * than Workers KV's edge-cached reads.
 *
 * Entries live in one table (`fedwork_kv` by default), created when the
 * store is first used: the key's JSON text, the value's JSON text and the
 * expiry time.  Expired rows are never returned; they are deleted when
 * their key is written again, not swept.
 *
 * @example
 * ```ts ignore
 * import { createFederation } from "@fedwork/core";
 * import { D1KvStore, WorkersMessageQueue } from "@fedwork/cfworkers";
 *
 * const federation = createFederation<Env>({
 *   kv: new D1KvStore(env.DB),
 *   queue: new WorkersMessageQueue(env.QUEUE),
 *   manuallyStartQueue: true,
 * });
 * ```
 * @since 0.3.0
 */
export class D1KvStore implements KvStore {
  readonly #database: WorkersD1Database;
  readonly #table: string;
  #ready: Promise<void> | undefined;

  /**
   * Creates a store on a D1 database binding.  Nothing is sent to the
   * database until the first call.
   * @param database The binding, e.g. `env.DB`.
   * @param options The table name.
   * @throws {TypeError} When the binding is missing, or an option is
   *                     unknown or invalid.
   * @since 0.3.0
   */
  constructor(database: WorkersD1Database, options: D1KvStoreOptions = {}) {
    if (database == null || typeof database.prepare !== "function") {
      throw new TypeError(
        `${WHERE} needs a D1 database binding (e.g. env.DB); got ${typeof database}.`,
      );
    }
    if (options == null || typeof options !== "object") {
      throw new TypeError(`${WHERE}'s second argument must be an options object.`);
    }
    assertKnownOptions(options, ["table"], { where: WHERE });
    const table = options.table ?? "fedwork_kv";
    if (typeof table !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
      throw new TypeError(
        `${WHERE}'s table option must be letters, digits and underscores, not starting with a ` +
          `digit; got ${JSON.stringify(table)}.`,
      );
    }
    this.#database = database;
    this.#table = table;
  }

  #prepared(): Promise<void> {
    this.#ready ??= this.#database.prepare(
      `CREATE TABLE IF NOT EXISTS ${this.#table} ` +
        "(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires INTEGER)",
    ).run().then(() => {}, (error) => {
      // Let the next call try again.
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #row(name: string): Promise<Row | null> {
    await this.#prepared();
    return await this.#database.prepare(
      `SELECT key, value, expires FROM ${this.#table} WHERE key = ?`,
    ).bind(name).first<Row>();
  }

  /**
   * Reads a value.
   * @param key The key.
   * @returns The value, or `undefined` when absent or expired.
   * @since 0.3.0
   */
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const row = await this.#row(JSON.stringify(key));
    return row == null || isExpired(row) ? undefined : JSON.parse(row.value) as T;
  }

  /**
   * Reads several values with one `SELECT … WHERE key IN (…)` per 100 keys
   * (D1 binds at most 100 parameters to a statement).
   * @param keys The keys; may be empty and may repeat a key.
   * @returns The values in the order of `keys`, `undefined` where a key is
   *          absent or expired.
   * @since 0.3.0
   */
  async getMany<T = unknown>(keys: readonly KvKey[]): Promise<(T | undefined)[]> {
    if (keys.length === 0) return [];
    const names = keys.map((key) => JSON.stringify(key));
    await this.#prepared();
    const pages: Promise<{ readonly results: Row[] }>[] = [];
    for (let i = 0; i < names.length; i += D1_MAX_PARAMETERS) {
      const page = names.slice(i, i + D1_MAX_PARAMETERS);
      pages.push(
        this.#database.prepare(
          `SELECT key, value, expires FROM ${this.#table} WHERE key IN (${
            page.map(() => "?").join(", ")
          })`,
        ).bind(...page).all<Row>(),
      );
    }
    const found = new Map<string, Row>();
    for (const { results } of await Promise.all(pages)) {
      for (const row of results) found.set(row.key, row);
    }
    return names.map((name) => {
      const row = found.get(name);
      return row == null || isExpired(row) ? undefined : JSON.parse(row.value) as T;
    });
  }

  /**
   * Writes a value.
   * @param key The key.
   * @param value A JSON-compatible value.
   * @param options The time to live; forever when absent.
   * @throws {TypeError} When the value cannot be encoded as JSON.
   * @throws {RangeError} When the TTL is negative.
   * @since 0.3.0
   */
  async set(key: KvKey, value: unknown, options: KvStoreSetOptions = {}): Promise<void> {
    const text = encodeJson(value, "value");
    const expires = expiresAt(options);
    await this.#prepared();
    await this.#database.prepare(
      `INSERT INTO ${this.#table} (key, value, expires) VALUES (?, ?, ?) ` +
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
    ).bind(JSON.stringify(key), text, expires).run();
  }

  /**
   * Writes several values with one D1 `batch()` (one round trip, one
   * transaction), or one write after another with a binding that has no
   * `batch()`.
   * @param entries The writes; a later entry for the same key wins.
   * @throws {TypeError} When a value cannot be encoded as JSON (nothing is
   *                     written then).
   * @throws {RangeError} When a TTL is negative (nothing is written).
   * @since 0.3.0
   */
  async setMany(entries: readonly KvStoreSetManyEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const rows = entries.map((entry) => [
      JSON.stringify(entry.key),
      encodeJson(entry.value, "value"),
      expiresAt(entry.options ?? {}),
    ]);
    await this.#prepared();
    const statements = rows.map((row) =>
      this.#database.prepare(
        `INSERT INTO ${this.#table} (key, value, expires) VALUES (?, ?, ?) ` +
          "ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires",
      ).bind(...row)
    );
    if (typeof this.#database.batch === "function") {
      await this.#database.batch(statements);
      return;
    }
    for (const statement of statements) await statement.run();
  }

  /**
   * Removes a value; removing an absent key is not an error.
   * @param key The key.
   * @since 0.3.0
   */
  async delete(key: KvKey): Promise<void> {
    await this.#prepared();
    await this.#database.prepare(`DELETE FROM ${this.#table} WHERE key = ?`)
      .bind(JSON.stringify(key)).run();
  }

  /**
   * Lists the unexpired entries whose key starts with `prefix`, element by
   * element (the prefix itself included), ordered by the keys' JSON text,
   * reading 100 rows at a time.
   * @param prefix The key prefix; every entry when absent.
   * @returns The entries.
   * @since 0.3.0
   */
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    await this.#prepared();
    const exact = prefix === undefined || prefix.length === 0 ? null : JSON.stringify(prefix);
    // `["a","b"]` minus its closing bracket plus a comma starts exactly the
    // keys that have ["a","b"] as an element-wise prefix.
    const starts = exact == null ? "[" : `${exact.slice(0, -1)},`;
    let after = "";
    while (true) {
      const { results } = await this.#database.prepare(
        `SELECT key, value, expires FROM ${this.#table} ` +
          "WHERE (key = ? OR substr(key, 1, length(?)) = ?) AND key > ? " +
          "AND (expires IS NULL OR expires > ?) ORDER BY key LIMIT ?",
      ).bind(exact, starts, starts, after, Date.now(), LIST_PAGE_SIZE).all<Row>();
      for (const row of results) {
        yield { key: JSON.parse(row.key) as KvKey, value: JSON.parse(row.value) };
      }
      if (results.length < LIST_PAGE_SIZE) return;
      after = results[results.length - 1].key;
    }
  }

  /**
   * Atomically replaces the value at `key` with `newValue` if the current
   * (unexpired) value deeply equals `expectedValue`; `undefined` means
   * absent.  The write is conditional on the row still holding what was
   * compared, so a concurrent write makes it compare again.
   * @param key The key.
   * @param expectedValue The value expected to be there now.
   * @param newValue The value to write.
   * @param options The time to live of the new value.
   * @returns `true` when the value was swapped.
   * @throws {TypeError} When a value cannot be encoded as JSON.
   * @throws {RangeError} When the TTL is negative.
   * @since 0.3.0
   */
  async cas(
    key: KvKey,
    expectedValue: unknown,
    newValue: unknown,
    options: KvStoreSetOptions = {},
  ): Promise<boolean> {
    const name = JSON.stringify(key);
    const text = encodeJson(newValue, "newValue");
    const expires = expiresAt(options);
    // Normalized through JSON so that the comparison sees what get() would.
    const expected = expectedValue === undefined
      ? undefined
      : JSON.parse(encodeJson(expectedValue, "expectedValue"));
    while (true) {
      const row = await this.#row(name);
      const live = row != null && !isExpired(row);
      const matches = live
        ? expected !== undefined && sameJson(JSON.parse(row.value), expected)
        : expected === undefined;
      if (!matches) return false;
      const result = row == null
        ? await this.#database.prepare(
          `INSERT INTO ${this.#table} (key, value, expires) VALUES (?, ?, ?) ` +
            "ON CONFLICT (key) DO NOTHING",
        ).bind(name, text, expires).run()
        : await this.#database.prepare(
          `UPDATE ${this.#table} SET value = ?, expires = ? ` +
            "WHERE key = ? AND value = ? AND expires IS ?",
        ).bind(text, expires, name, row.value, row.expires).run();
      if (result.meta.changes === 1) return true;
      // Someone wrote in between: compare with what is there now.
    }
  }
}

function encodeJson(value: unknown, what: string): string {
  const text = JSON.stringify(value);
  if (text === undefined) {
    throw new TypeError(`The ${what} must be JSON-compatible; got ${typeof value}.`);
  }
  return text;
}

function expiresAt(options: KvStoreSetOptions): number | null {
  return options.ttl === undefined ? null : Date.now() + durationToMilliseconds(options.ttl, "ttl");
}

function isExpired(row: Row): boolean {
  return row.expires != null && row.expires <= Date.now();
}

/** Deep equality of two values parsed from JSON; key order does not matter. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => sameJson(item, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length &&
    keys.every((name) => Object.hasOwn(right, name) && sameJson(left[name], right[name]));
}
