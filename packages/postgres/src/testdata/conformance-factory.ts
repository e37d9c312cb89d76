// The conformance factory for PostgresMessageQueue (see
// @fedwork/testing): each namespace becomes its own table, and every queue
// instance opens its own client.
import process from "node:process";
import postgres from "postgres";
import { PostgresMessageQueue } from "../message-queue.ts";

/** The server the tests use. */
export const POSTGRES_URL = process.env.POSTGRES_URL ??
  "postgres://postgres@127.0.0.1:5432/test";

/**
 * Turns a test namespace (`fedwork-test-<hex>`) into a table name.
 * @param namespace The namespace.
 * @returns A plain SQL name.
 */
export function tableNameFor(namespace: string): string {
  return namespace.replaceAll("-", "_");
}

/** Returns a new queue instance on the table of `namespace`. */
export function createQueue(
  namespace: string,
  options: { leaseMs: number; prefetch?: number },
): PostgresMessageQueue {
  return new PostgresMessageQueue(POSTGRES_URL, {
    tableName: tableNameFor(namespace),
    leaseTime: { milliseconds: options.leaseMs },
    // The suite must hold with prefetched messages (leased, heartbeated,
    // released on stop), whatever the default is.
    prefetch: options.prefetch ?? 8,
  });
}

/** Drops the table of `namespace`. */
export async function cleanup(namespace: string): Promise<void> {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    await sql.unsafe(`DROP TABLE IF EXISTS "${tableNameFor(namespace)}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
