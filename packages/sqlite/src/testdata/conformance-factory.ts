// The conformance factory for SqliteMessageQueue (see
// sqlite-message-queue.test.ts).  A namespace maps to a database file whose
// path depends only on the namespace, so that the crash test's child
// process, which imports this module on its own, opens the same file.
import process from "node:process";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageQueue } from "@fedwork/core";
import { SqliteMessageQueue } from "../message-queue.ts";

/**
 * The database file of a test namespace: `<SQLITE_PATH>/<namespace>.sqlite`,
 * where `SQLITE_PATH` is a directory and defaults to the system's
 * temporary directory.
 */
export function databasePath(namespace: string): string {
  return join(process.env.SQLITE_PATH || tmpdir(), `${namespace}.sqlite`);
}

/** A new queue instance on the namespace's database file. */
export function createQueue(
  namespace: string,
  options: { leaseMs: number; prefetch?: number },
): MessageQueue {
  return new SqliteMessageQueue({
    path: databasePath(namespace),
    leaseTime: { milliseconds: options.leaseMs },
    // Instances in one test may run in different processes (the crash
    // test); a short poll keeps those tests quick.
    pollInterval: { milliseconds: 100 },
    // The suite must hold with prefetched messages (leased, heartbeated,
    // released on stop), whatever the default is.
    prefetch: options.prefetch ?? 8,
    // The suites count what one handler slot holds (prefetched messages,
    // those started before a higher priority arrived): keep one, as the
    // other backends do by default.
    concurrency: 1,
  });
}

/** Removes the namespace's database file and its WAL and shared-memory files. */
export async function cleanup(namespace: string): Promise<void> {
  const path = databasePath(namespace);
  await Promise.all(["", "-wal", "-shm"].map((suffix) => rm(path + suffix, { force: true })));
}
