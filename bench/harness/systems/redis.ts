// Redis: Fedwork's RedisMessageQueue, BullMQ, and a bare LPUSH / RPOP loop.
// Each system has a Redis database of its own (REDIS_URL's host, databases
// 10–15, or 4–9 at the smoke size), flushed before every measurement, so that nothing they leave
// behind meets the tests (database 0) or another system.
import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import process from "node:process";
import type { Driver, Payload, Workers } from "../driver.ts";
import { isSmoke } from "../namespace.ts";
import type { QueueSource } from "./fedwork.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** The database number of each system: 10–15, or 4–9 for a smoke run. */
export const REDIS_DATABASES = {
  get "fedwork-tasks"() {
    return isSmoke() ? 6 : 10;
  },
  get "fedwork-no-records"() {
    return isSmoke() ? 5 : 14;
  },
  get "fedwork-raw"() {
    return isSmoke() ? 7 : 11;
  },
  get bullmq() {
    return isSmoke() ? 8 : 12;
  },
  get "ioredis-list"() {
    return isSmoke() ? 9 : 13;
  },
  get "fedwork-kv"() {
    return isSmoke() ? 4 : 15;
  },
  get "fedwork-many"() {
    return isSmoke() ? 3 : 2;
  },
};

function urlFor(db: number): string {
  const url = new URL(REDIS_URL);
  url.pathname = `/${db}`;
  return url.href;
}

async function flush(db: number): Promise<void> {
  const client = new Redis(urlFor(db));
  try {
    await client.flushdb();
  } finally {
    client.disconnect();
  }
}

/** RedisMessageQueue instances on database `db`. */
export function fedworkRedisSource(db: number, options: { kv?: boolean } = {}): QueueSource {
  const url = urlFor(db);
  const open: AsyncDisposable[] = [];
  let producer: RedisMessageQueue | undefined;
  const track = <T extends AsyncDisposable>(opened: T) => (open.push(opened), opened);
  const closeAll = async () => {
    producer = undefined;
    await Promise.all(open.splice(0).map((q) => q[Symbol.asyncDispose]()));
  };
  return {
    async reset() {
      await closeAll();
      await flush(db);
    },
    producer: () => producer ??= track(new RedisMessageQueue({ url, queue: "bench" })),
    consumer: (concurrency) => track(new RedisMessageQueue({ url, queue: "bench", concurrency })),
    close: closeAll,
    // Records, markers and the queue in one database: what a deployment
    // on Redis alone does.
    ...(options.kv ? { kv: () => track(new RedisKvStore({ url })) } : {}),
  };
}

/** BullMQ 5+: `Queue.addBulk()` and a `Worker` with `concurrency`. */
export function bullmqDriver(): Driver {
  const db = REDIS_DATABASES.bullmq;
  const url = new URL(REDIS_URL);
  const connection = {
    host: url.hostname,
    port: Number(url.port || 6379),
    db,
    maxRetriesPerRequest: null,
  };
  let queue: Queue | undefined;
  const queueFor = () => queue ??= new Queue("bench", { connection });
  // Completed jobs are removed, as Fedwork removes acknowledged messages.
  const jobOptions = { removeOnComplete: true, removeOnFail: true };
  return {
    async reset() {
      await queue?.close();
      queue = undefined;
      await flush(db);
    },
    async enqueueBulk(payloads, chunk) {
      const q = queueFor();
      for (let i = 0; i < payloads.length; i += chunk) {
        await q.addBulk(
          payloads.slice(i, i + chunk).map((data) => ({ name: "bench", data, opts: jobOptions })),
        );
      }
    },
    async enqueueOne(payload) {
      await queueFor().add("bench", payload, jobOptions);
    },
    async work(concurrency, handler) {
      const worker = new Worker<Payload>("bench", (job) => {
        handler(job.data);
        return Promise.resolve();
      }, { connection, concurrency });
      await worker.waitUntilReady();
      return { stop: () => worker.close() };
    },
    async close() {
      await queue?.close();
    },
  };
}

/**
 * The engine's limit for a list-based queue: `LPUSH` to store, and per
 * worker one connection looping on `RPOP` (falling back to a blocking
 * `BRPOP` when the list is empty).  No leases, no acknowledgements.
 */
export function ioredisListDriver(): Driver {
  const db = REDIS_DATABASES["ioredis-list"];
  const key = "bench:list";
  let client: Redis | undefined;
  const clientFor = () => client ??= new Redis(urlFor(db));
  return {
    async reset() {
      await flush(db);
    },
    async enqueueBulk(payloads, chunk) {
      const c = clientFor();
      for (let i = 0; i < payloads.length; i += chunk) {
        await c.lpush(key, ...payloads.slice(i, i + chunk).map((p) => JSON.stringify(p)));
      }
    },
    async enqueueOne(payload) {
      await clientFor().lpush(key, JSON.stringify(payload));
    },
    async work(concurrency, handler) {
      let stopped = false;
      const connections = Array.from({ length: concurrency }, () => new Redis(urlFor(db)));
      const loops = connections.map(async (connection) => {
        while (!stopped) {
          let raw = await connection.rpop(key);
          if (raw == null) {
            const popped = await connection.brpop(key, 0.2);
            if (popped == null) continue;
            raw = popped[1];
          }
          handler(JSON.parse(raw) as Payload);
        }
      });
      await Promise.all(connections.map((c) => c.ping()));
      return {
        async stop() {
          stopped = true;
          await Promise.all(loops);
          for (const c of connections) c.disconnect();
        },
      } satisfies Workers;
    },
    close() {
      client?.disconnect();
      return Promise.resolve();
    },
  };
}
