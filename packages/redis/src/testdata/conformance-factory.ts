// The conformance factory of RedisMessageQueue: each test namespace is a
// queue name, so its keys are `{fedwork:<namespace>}:*`.  Also imported by
// the crash-test child process, so it must not register tests.
import process from "node:process";
import { Redis } from "ioredis";
import { escapeGlob } from "../kv-codec.ts";
import { RedisMessageQueue } from "../message-queue.ts";

/** The Redis server the tests use. */
export const REDIS_URL: string = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** Returns a new instance, with its own connections, of queue `namespace`. */
export function createQueue(
  namespace: string,
  options: { leaseMs: number; prefetch?: number },
): RedisMessageQueue {
  return new RedisMessageQueue({
    url: REDIS_URL,
    queue: namespace,
    leaseTime: { milliseconds: options.leaseMs },
    ...(options.prefetch == null ? {} : { prefetch: options.prefetch }),
  });
}

/** Deletes every key of queue `namespace`. */
export async function cleanup(namespace: string): Promise<void> {
  await deleteKeys(`{fedwork:${namespace}}`);
}

/**
 * Deletes every key starting with `prefix` (SCAN, then DEL), on a
 * connection of its own.
 */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(
        cursor,
        "MATCH",
        `${escapeGlob(prefix)}*`,
        "COUNT",
        500,
      );
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}
