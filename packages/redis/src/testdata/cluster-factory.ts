// The conformance factory of RedisMessageQueue on a Redis Cluster: the same
// as conformance-factory.ts, with every connection an ioredis Cluster.  The
// nodes come from REDIS_CLUSTER_NODES (host:port, comma-separated), by
// default the three masters scripts/ensure-services.sh starts on loopback.
// Also imported by the crash-test child process: it must not register tests.
import process from "node:process";
import { Cluster, type Redis } from "ioredis";
import { escapeGlob } from "../kv-codec.ts";
import { RedisMessageQueue } from "../message-queue.ts";

/** The cluster's nodes the tests start from. */
export const REDIS_CLUSTER_NODES: readonly { host: string; port: number }[] =
  (process.env.REDIS_CLUSTER_NODES ?? "127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002")
    .split(",")
    .map((node) => {
      const at = node.trim().lastIndexOf(":");
      return { host: node.trim().slice(0, at), port: Number(node.trim().slice(at + 1)) };
    });

/**
 * A new Cluster client.  It gives up on a command after a few retries
 * rather than queueing it for ever, so that an unreachable cluster fails
 * the tests instead of hanging them.
 */
export function createCluster(): Cluster {
  return new Cluster([...REDIS_CLUSTER_NODES], {
    clusterRetryStrategy: (times) => times > 10 ? null : Math.min(times * 100, 1000),
    redisOptions: { maxRetriesPerRequest: 3 },
  });
}

/** Returns a new instance, with its own connections, of queue `namespace`. */
export function createQueue(
  namespace: string,
  options: { leaseMs: number; prefetch?: number },
): RedisMessageQueue {
  return new RedisMessageQueue({
    createClient: createCluster,
    queue: namespace,
    leaseTime: { milliseconds: options.leaseMs },
    ...(options.prefetch == null ? {} : { prefetch: options.prefetch }),
  });
}

/** Deletes every key of queue `namespace`. */
export async function cleanup(namespace: string): Promise<void> {
  await deleteClusterKeys(`{fedwork:${namespace}}`);
}

/**
 * Deletes every key starting with `prefix` on every master (SCAN, then DEL
 * key by key, since the keys may be in different slots).
 */
export async function deleteClusterKeys(prefix: string): Promise<void> {
  const cluster = createCluster();
  try {
    await new Promise<void>((resolve, reject) => {
      cluster.once("ready", resolve);
      cluster.once("error", reject);
    });
    await Promise.all(cluster.nodes("master").map((node) => deleteNodeKeys(node, prefix)));
  } finally {
    await cluster.quit().catch(() => cluster.disconnect());
  }
}

async function deleteNodeKeys(node: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await node.scan(cursor, "MATCH", `${escapeGlob(prefix)}*`, "COUNT", 500);
    cursor = next;
    for (const key of keys) await node.del(key);
  } while (cursor !== "0");
}
