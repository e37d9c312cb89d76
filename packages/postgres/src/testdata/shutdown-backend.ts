// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own queue, store and pub/sub (each with its own pool, and the
// queue and pub/sub with a LISTEN connection), on the namespace's tables.
import type { ShutdownBackend } from "@fedwork/testing";
import postgres from "postgres";
import { PostgresKvStore } from "../kv-store.ts";
import { PostgresMessageQueue } from "../message-queue.ts";
import { PostgresPubSub } from "../pubsub.ts";
import { POSTGRES_URL, tableNameFor } from "./conformance-factory.ts";

// Leases (and hand-back delays) far longer than the test: the task the
// first worker's shutdown cuts short can only reach the second worker in
// time if the first one released it.
const LEASE = { minutes: 10 } as const;

/** Opens a process's clients on the namespace's tables. */
export function open(namespace: string): ShutdownBackend {
  const table = tableNameFor(namespace);
  return {
    queue: new PostgresMessageQueue(POSTGRES_URL, { tableName: table, leaseTime: LEASE }),
    kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${table}_kv` }),
    pubsub: new PostgresPubSub(POSTGRES_URL, { prefix: `${table}:` }),
  };
}

/** Drops the namespace's tables. */
export async function cleanup(namespace: string): Promise<void> {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
  try {
    const tables = await sql<{ tablename: string }[]>`
      SELECT tablename FROM pg_tables WHERE tablename LIKE ${tableNameFor(namespace) + "%"}`;
    for (const { tablename } of tables) await sql.unsafe(`DROP TABLE IF EXISTS "${tablename}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
