import type { Sql } from "postgres";

/**
 * Runs idempotent DDL in a transaction holding an advisory lock named after
 * the table, so that several processes creating the same table at once do
 * not race (concurrent `CREATE TABLE IF NOT EXISTS` of one relation can fail
 * with a unique violation in the catalog).
 * @param sql The client.
 * @param lockName A name identifying the table, hashed into the lock key.
 * @param ddl The statements to run.
 */
export async function createTables(sql: Sql, lockName: string, ddl: string): Promise<void> {
  await sql.begin(async (tx) => {
    // "relation already exists, skipping" notices are noise here.
    await tx.unsafe("SET LOCAL client_min_messages = warning");
    await tx.unsafe("SELECT pg_advisory_xact_lock(hashtext($1::text))", [
      `fedwork:${lockName}`,
    ]);
    await tx.unsafe(ddl);
  });
}
