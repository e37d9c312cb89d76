// Fedwork's durable engines as a Fedify federation uses them: a queue and a
// key–value store per engine, isolated under a namespace.  A namespace names
// the same queue in every process, so the worker script (fedify-worker.ts)
// and the test share it.
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresKvStore, PostgresMessageQueue } from "@fedwork/postgres";
import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";
import { SqliteKvStore, SqliteMessageQueue } from "@fedwork/sqlite";
import { Redis } from "ioredis";
import postgres from "postgres";
import { POSTGRES_URL, REDIS_URL } from "./services.ts";

/** A queue and a store, and how to close them. */
export interface EngineInstance {
  readonly queue: SqliteMessageQueue | RedisMessageQueue | PostgresMessageQueue;
  readonly kv: SqliteKvStore | RedisKvStore | PostgresKvStore;
  /** Closes the connections; the data stays. */
  close(): Promise<void>;
}

/** One of Fedwork's engines. */
export interface FedworkEngine {
  readonly name: "sqlite" | "redis" | "postgres";
  /** E.g. `"@fedwork/postgres"`. */
  readonly packageName: string;
  /** A new instance on `namespace`, whose queue's lease is `leaseMs`. */
  open(namespace: string, leaseMs: number): EngineInstance;
  /** Deletes everything stored under `namespace`. */
  cleanup(namespace: string): Promise<void>;
}

function sqlitePath(namespace: string): string {
  return join(tmpdir(), `${namespace}.sqlite`);
}

export const FEDWORK_ENGINES: readonly FedworkEngine[] = [
  {
    name: "sqlite",
    packageName: "@fedwork/sqlite",
    open(namespace, leaseMs) {
      const path = sqlitePath(namespace);
      const queue = new SqliteMessageQueue({
        path,
        leaseTime: { milliseconds: leaseMs },
        // The worker may be another process: poll for its enqueues often.
        pollInterval: { milliseconds: 100 },
      });
      const kv = new SqliteKvStore({ path });
      return {
        queue,
        kv,
        close: async () => {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
        },
      };
    },
    async cleanup(namespace) {
      const path = sqlitePath(namespace);
      await Promise.all(["", "-wal", "-shm"].map((end) => rm(path + end, { force: true })));
    },
  },
  {
    name: "redis",
    packageName: "@fedwork/redis",
    open(namespace, leaseMs) {
      const queue = new RedisMessageQueue({
        url: REDIS_URL,
        queue: namespace,
        leaseTime: { milliseconds: leaseMs },
      });
      const kv = new RedisKvStore({ url: REDIS_URL, prefix: namespace });
      return {
        queue,
        kv,
        close: async () => {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
        },
      };
    },
    async cleanup(namespace) {
      const redis = new Redis(REDIS_URL);
      try {
        // The queue's keys are {fedwork:<namespace>}…, the store's <namespace>:kv:….
        const keys = await redis.keys(`*${namespace}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        await redis.quit();
      }
    },
  },
  {
    name: "postgres",
    packageName: "@fedwork/postgres",
    open(namespace, leaseMs) {
      const queue = new PostgresMessageQueue(POSTGRES_URL, {
        tableName: `${namespace}_queue`,
        leaseTime: { milliseconds: leaseMs },
      });
      const kv = new PostgresKvStore(POSTGRES_URL, { tableName: `${namespace}_kv` });
      return {
        queue,
        kv,
        close: async () => {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
        },
      };
    },
    async cleanup(namespace) {
      const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
      try {
        await sql.unsafe(`DROP TABLE IF EXISTS "${namespace}_queue", "${namespace}_kv"`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  },
];

/** The engine named `name`. */
export function fedworkEngine(name: string): FedworkEngine {
  const engine = FEDWORK_ENGINES.find((e) => e.name === name);
  if (engine == null) throw new Error(`Unknown engine ${name}.`);
  return engine;
}
