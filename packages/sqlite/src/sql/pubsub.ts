// The SQL of SqlitePubSub: one table of recent publications, read by id.
import type { SqliteDatabase, SqliteStatement } from "../driver.ts";

/**
 * The table of publications.  `AUTOINCREMENT` so that an id is never used
 * twice, even after the newest rows were pruned: subscribers read
 * "everything after the last id I saw".
 * @param table The validated table name, unquoted.
 * @returns The statements to run once per connection.
 */
export function pubsubSchemaSql(table: string): string {
  const t = `"${table}"`;
  return `
    CREATE TABLE IF NOT EXISTS ${t} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      topic TEXT NOT NULL,
      payload TEXT NOT NULL,
      origin TEXT NOT NULL,
      published_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${table}_published_at" ON ${t} (published_at);
  `;
}

/** The prepared statements of one SqlitePubSub connection. */
export interface PubSubStatements {
  /** (topic, payload, origin, published_at) */
  readonly insert: SqliteStatement;
  /** (after id, origin to skip, limit) → id, topic, payload */
  readonly readAfter: SqliteStatement;
  /** () → id: the newest id, or null */
  readonly newest: SqliteStatement;
  /** (published before) */
  readonly prune: SqliteStatement;
  /** () → data_version */
  readonly dataVersion: SqliteStatement;
}

/**
 * Prepares the statements once per connection.
 * @param database The connection.
 * @param table The validated table name, unquoted.
 * @returns The statements.
 */
export function preparePubSubStatements(
  database: SqliteDatabase,
  table: string,
): PubSubStatements {
  const t = `"${table}"`;
  return {
    insert: database.prepare(
      `INSERT INTO ${t} (topic, payload, origin, published_at) VALUES (?, ?, ?, ?)`,
    ),
    readAfter: database.prepare(
      `SELECT id, topic, payload FROM ${t} WHERE id > ? AND origin <> ? ORDER BY id LIMIT ?`,
    ),
    newest: database.prepare(`SELECT max(id) AS id FROM ${t}`),
    prune: database.prepare(`DELETE FROM ${t} WHERE published_at < ?`),
    // Changes whenever another connection (in any process) committed to
    // the file since this connection last asked: a read of a counter in
    // the shared-memory index, no table is touched.
    dataVersion: database.prepare("PRAGMA data_version"),
  };
}
