// The conformance factory conformance.ts gives @fedwork/testing for the
// SQLite queue installed from its tarball: a namespace is a database file
// in the system's temporary directory, so that the crash test's worker
// process, which imports this module on its own, opens the same one.
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteMessageQueue } from "@fedwork/sqlite";

function path(namespace: string): string {
  return join(tmpdir(), `${namespace}.sqlite`);
}

export function createQueue(namespace: string, options: { leaseMs: number }) {
  return new SqliteMessageQueue({
    path: path(namespace),
    leaseTime: { milliseconds: options.leaseMs },
    pollInterval: { milliseconds: 100 },
  });
}

export async function cleanup(namespace: string): Promise<void> {
  await Promise.all(["", "-wal", "-shm"].map((end) => rm(path(namespace) + end, { force: true })));
}
