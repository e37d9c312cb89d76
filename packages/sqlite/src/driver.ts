/**
 * A value SQLite accepts as a bound parameter.
 * @since 0.1.0
 */
export type SqliteValue = string | number | bigint | null | Uint8Array;

/**
 * A row as the drivers return it: column name to value.
 * @since 0.1.0
 */
export type SqliteRow = Record<string, unknown>;

/**
 * A prepared statement, reduced to what Fedwork uses.  Both `node:sqlite`'s
 * `StatementSync` and `bun:sqlite`'s `Statement` fit this shape once
 * {@link SqliteStatement.get} is normalized to `undefined` for no row.
 * @since 0.1.0
 */
export interface SqliteStatement {
  /** Runs the statement; returns how many rows it changed. */
  run(...params: SqliteValue[]): { changes: number | bigint };
  /** Runs the statement and returns every row. */
  all(...params: SqliteValue[]): SqliteRow[];
  /** Runs the statement and returns the first row, or `undefined`. */
  get(...params: SqliteValue[]): SqliteRow | undefined;
}

/**
 * A synchronous SQLite connection: the seam between Fedwork's SQL and the
 * runtime's built-in SQLite module.
 * @since 0.1.0
 */
export interface SqliteDatabase {
  /** Runs one or more SQL statements without parameters. */
  exec(sql: string): void;
  /** Compiles a statement once, to run many times. */
  prepare(sql: string): SqliteStatement;
  /** Closes the connection. */
  close(): void;
}

// The parts of bun:sqlite that Fedwork uses, declared here so that type
// checkers without Bun's types (tsc with Node.js types, deno check) accept
// this module.
interface BunStatement {
  run(...params: SqliteValue[]): { changes: number };
  all(...params: SqliteValue[]): SqliteRow[];
  get(...params: SqliteValue[]): SqliteRow | null;
}
interface BunDatabase {
  exec(sql: string): void;
  prepare(sql: string): BunStatement;
  close(): void;
}
interface BunSqliteModule {
  Database: new (path: string, options?: { create?: boolean; readwrite?: boolean }) => BunDatabase;
}

/**
 * Opens a SQLite database file with the runtime's built-in SQLite:
 * `bun:sqlite` on Bun, `node:sqlite` on Node.js and Deno.  The file is
 * created when it does not exist.
 * @param path The database file's path.
 * @returns The open connection.
 * @since 0.1.0
 */
export async function openSqliteDatabase(path: string): Promise<SqliteDatabase> {
  if ("Bun" in globalThis) return await openBunDatabase(path);
  const { DatabaseSync } = await import("node:sqlite");
  const database = new DatabaseSync(path);
  return {
    exec: (sql) => database.exec(sql),
    prepare(sql) {
      const statement = database.prepare(sql);
      return {
        run: (...params) => statement.run(...params),
        all: (...params) => statement.all(...params) as SqliteRow[],
        get: (...params) => statement.get(...params) as SqliteRow | undefined,
      };
    },
    close: () => database.close(),
  };
}

async function openBunDatabase(path: string): Promise<SqliteDatabase> {
  // A variable specifier keeps bundlers and type checkers from resolving
  // bun:sqlite on the other runtimes.
  const specifier = "bun:sqlite";
  const { Database } = await import(specifier) as BunSqliteModule;
  const database = new Database(path, { create: true, readwrite: true });
  return {
    exec: (sql) => database.exec(sql),
    prepare(sql) {
      const statement = database.prepare(sql);
      return {
        run: (...params) => statement.run(...params),
        all: (...params) => statement.all(...params),
        get: (...params) => statement.get(...params) ?? undefined,
      };
    },
    close: () => database.close(),
  };
}

/**
 * Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back when it
 * throws.  `BEGIN IMMEDIATE` takes SQLite's single write lock up front, so
 * a read-then-write inside `body` cannot be interleaved with another
 * connection's write (in WAL mode a deferred transaction would fail with
 * `SQLITE_BUSY_SNAPSHOT` instead of waiting).
 * @param database The connection.
 * @param body The work; synchronous, so nothing else in this process runs
 *             in between.
 * @returns What `body` returned.
 * @since 0.1.0
 */
export function runImmediateTransaction<T>(database: SqliteDatabase, body: () => T): T {
  database.exec("BEGIN IMMEDIATE");
  let result: T;
  try {
    result = body();
  } catch (error) {
    try {
      database.exec("ROLLBACK");
    } catch {
      // The transaction may already be gone (SQLite rolls back on some
      // errors by itself); the original error is what matters.
    }
    throw error;
  }
  database.exec("COMMIT");
  return result;
}

/**
 * Sets the pragmas every Fedwork connection uses: WAL journaling (readers
 * never block the writer, and several processes can share the file) and a
 * busy timeout, so that a connection waits for another one's write lock
 * instead of failing at once.
 * @param database The connection.
 * @param busyTimeoutMs How long to wait for a lock, in milliseconds.
 * @since 0.1.0
 */
export function configureConnection(database: SqliteDatabase, busyTimeoutMs: number): void {
  // busy_timeout first: switching to WAL itself needs a lock.
  database.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  database.exec("PRAGMA journal_mode = WAL");
}
