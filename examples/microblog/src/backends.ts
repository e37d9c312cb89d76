// Which engines hold the queue and the federation's KV store: SQLite files
// in the data folder unless REDIS_URL, POSTGRES_URL or AMQP_URL says
// otherwise; QUEUE_CONCURRENCY and QUEUE_PREFETCH set the queue's flow.
// The engines are imported only when chosen, so the default loads no
// network driver.
import { join } from "node:path";
import type { KvStore, MessageQueue } from "@fedwork/core";

/** A queue and a KV store, and how to close them. */
export interface Backends extends AsyncDisposable {
  readonly queue: MessageQueue;
  readonly kv: KvStore;
  /** For the logs: e.g. "SQLite queue, SQLite KV". */
  readonly description: string;
}

/** Where the backends come from. */
export interface BackendOptions {
  /** The data folder, for the SQLite files. */
  readonly dataDir: string;
  /**
   * Names this instance's queue and keys on a shared engine, so two
   * instances on one Redis (the demo) do not read each other's messages.
   */
  readonly instance: string;
  /** `REDIS_URL`, `POSTGRES_URL`, `AMQP_URL`; `process.env` in practice. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How often the SQLite queue polls. @default 1 second (the queue's default) */
  readonly pollIntervalMs?: number;
}

const dispose = async (value: unknown) => {
  await (value as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
};

/**
 * Reads a whole-number environment variable (`QUEUE_CONCURRENCY`,
 * `QUEUE_PREFETCH`), or `undefined` when it is not set.
 */
function wholeNumber(
  env: BackendOptions["env"],
  name: string,
  min: number,
): number | undefined {
  const text = env[name];
  if (text == null || text === "") return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`${name} must be a whole number ≥ ${min}; got ${JSON.stringify(text)}.`);
  }
  return value;
}

/** Opens the queue and the KV store the environment asks for. */
export async function openBackends(options: BackendOptions): Promise<Backends> {
  const { env, instance } = options;
  // How many handlers each worker process runs at once, and how many more
  // messages it claims ahead: the engines' defaults (1 and 16) unless set.
  const concurrency = wholeNumber(env, "QUEUE_CONCURRENCY", 1);
  const prefetch = wholeNumber(env, "QUEUE_PREFETCH", 0);
  const flow = {
    ...(concurrency == null ? {} : { concurrency }),
    ...(prefetch == null ? {} : { prefetch }),
  };
  const { SqliteKvStore, SqliteMessageQueue } = await import("@fedwork/sqlite");
  const sqliteKv = () => new SqliteKvStore({ path: join(options.dataDir, "kv.sqlite") });
  let queue: MessageQueue;
  let kv: KvStore;
  let description: string;
  if (env.REDIS_URL) {
    const { RedisKvStore, RedisMessageQueue } = await import("@fedwork/redis");
    const prefix = `microblog:${instance}`;
    queue = new RedisMessageQueue({ url: env.REDIS_URL, prefix, ...flow });
    kv = new RedisKvStore({ url: env.REDIS_URL, prefix });
    description = "Redis queue, Redis KV";
  } else if (env.POSTGRES_URL) {
    const { PostgresKvStore, PostgresMessageQueue } = await import("@fedwork/postgres");
    const table = `microblog_${instance.replace(/\W/g, "_")}`;
    queue = new PostgresMessageQueue(env.POSTGRES_URL, {
      tableName: `${table}_queue`,
      channelName: `${table}_queue`,
      ...flow,
    });
    kv = new PostgresKvStore(env.POSTGRES_URL, { tableName: `${table}_kv` });
    description = "PostgreSQL queue, PostgreSQL KV";
  } else if (env.AMQP_URL) {
    // RabbitMQ has no key-value store: keep the SQLite one.
    const { AmqpMessageQueue } = await import("@fedwork/amqp");
    queue = new AmqpMessageQueue({ url: env.AMQP_URL, queue: `microblog-${instance}`, ...flow });
    kv = sqliteKv();
    description = "RabbitMQ queue, SQLite KV";
  } else {
    queue = new SqliteMessageQueue({
      path: join(options.dataDir, "queue.sqlite"),
      ...flow,
      ...(options.pollIntervalMs == null
        ? {}
        : { pollInterval: { milliseconds: options.pollIntervalMs } }),
    });
    kv = sqliteKv();
    description = "SQLite queue, SQLite KV";
  }
  return {
    queue,
    kv,
    description,
    async [Symbol.asyncDispose]() {
      await dispose(queue);
      await dispose(kv);
    },
  };
}
