// The backend of testGracefulShutdown() in ../shutdown.test.ts: a worker
// process's own queue, store and pub/sub clients, on the namespace.
import type { ShutdownBackend } from "@fedwork/testing";
import { deleteKeys, REDIS_URL } from "./conformance-factory.ts";
import { openRedisBackend, redisBackendPrefixes } from "./progress-backend.ts";

/** Opens a process's clients on the namespace. */
export function open(namespace: string): ShutdownBackend {
  const { queue, kv, pubsub } = openRedisBackend({ url: REDIS_URL }, namespace);
  return { queue, kv, ...(pubsub == null ? {} : { pubsub }) };
}

/** Deletes the namespace's keys. */
export async function cleanup(namespace: string): Promise<void> {
  for (const prefix of redisBackendPrefixes(namespace)) await deleteKeys(prefix);
}
