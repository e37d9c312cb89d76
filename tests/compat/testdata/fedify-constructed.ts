// Fedwork's engines constructed the way a Fedify app constructs Fedify's:
// the client, database or connection first, then Fedify's options.  That
// these type-check against Fedwork's classes is part of what is tested.
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { AmqpMessageQueue } from "@fedwork/amqp";
import { type KvStore, MemoryKvStore, type MessageQueue } from "@fedwork/core";
import { type DenoKv, DenoKvMessageQueue, DenoKvStore } from "@fedwork/denokv";
import { PostgresKvStore, PostgresMessageQueue } from "@fedwork/postgres";
import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";
import { SqliteKvStore, SqliteMessageQueue, type SqliteOpenDatabase } from "@fedwork/sqlite";
import { connect } from "amqplib";
import { Redis } from "ioredis";
import postgres from "postgres";
import { POSTGRES_URL, REDIS_URL } from "./services.ts";

/** The broker. */
const AMQP_URL: string = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";

/** A queue and a store built Fedify's way, and how to get rid of them. */
export interface ConstructedEngine {
  readonly queue: MessageQueue & AsyncDisposable;
  readonly kv: KvStore;
  /**
   * Disposes of the queue and the store, checks that the client handed in
   * is still open (it is the app's), then closes it and deletes the data.
   */
  close(): Promise<void>;
}

/** One engine, as the test names it. */
export interface ConstructedEngineFactory {
  /** E.g. `"new RedisMessageQueue(() => redis)"`. */
  readonly name: string;
  open(namespace: string): Promise<ConstructedEngine>;
}

/** The runtime's own SQLite database, as a Fedify app opens it. */
async function openSqlite(path: string): Promise<SqliteOpenDatabase & { close(): void }> {
  if ("Bun" in globalThis) {
    const specifier = "bun:sqlite";
    const { Database } = await import(specifier) as {
      Database: new (path: string) => SqliteOpenDatabase & { close(): void };
    };
    return new Database(path);
  }
  const { DatabaseSync } = await import("node:sqlite");
  return new DatabaseSync(path);
}

/** A Deno KV database file: Deno.openKv() on Deno, @deno/kv elsewhere. */
async function openDenoKv(path: string): Promise<DenoKv & { close(): void }> {
  const deno = (globalThis as unknown as {
    Deno?: { openKv(path: string): Promise<DenoKv & { close(): void }> };
  }).Deno;
  if (deno != null) return await deno.openKv(path);
  // A variable, so that Deno's type check leaves the npm package alone.
  const specifier = "@deno/kv";
  const { openKv } = await import(specifier) as {
    openKv(path: string, options?: object): Promise<DenoKv & { close(): void }>;
  };
  // Bun's structured serialization is not V8's, which @deno/kv expects by
  // default; Fedwork's values are JSON-compatible.
  return await openKv(
    path,
    "Bun" in globalThis
      ? {
        encodeV8: (value: unknown) => new TextEncoder().encode(JSON.stringify(value)),
        decodeV8: (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)),
      }
      : {},
  );
}

async function removeFiles(path: string): Promise<void> {
  await Promise.all(
    ["", "-wal", "-shm", "-journal"].map((end) => rm(path + end, { force: true })),
  );
}

export const CONSTRUCTED_ENGINES: readonly ConstructedEngineFactory[] = [
  {
    name: "new SqliteMessageQueue(db) and new SqliteKvStore(db)",
    async open(namespace) {
      const path = join(tmpdir(), `${namespace}.sqlite`);
      const db = await openSqlite(path);
      const queue = new SqliteMessageQueue(db, { pollInterval: { milliseconds: 100 } });
      const kv = new SqliteKvStore(db, { initialized: false });
      return {
        queue,
        kv,
        async close() {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
          (db.prepare("SELECT 1") as { get(): unknown }).get();
          db.close();
          await removeFiles(path);
        },
      };
    },
  },
  {
    name: "new RedisMessageQueue(() => redis) and new RedisKvStore(redis)",
    // deno-lint-ignore require-await
    async open(namespace) {
      const redis = new Redis(REDIS_URL);
      const queue = new RedisMessageQueue(() => new Redis(REDIS_URL), {
        prefix: namespace,
        pollInterval: { seconds: 1 },
      });
      const kv = new RedisKvStore(redis, { prefix: namespace });
      return {
        queue,
        kv,
        async close() {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
          const keys = await redis.keys(`*${namespace}*`);
          if (keys.length > 0) await redis.del(...keys);
          await redis.quit();
        },
      };
    },
  },
  {
    name: "new PostgresMessageQueue(sql) and new PostgresKvStore(sql)",
    // deno-lint-ignore require-await
    async open(namespace) {
      const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
      const queue = new PostgresMessageQueue(sql, {
        tableName: `${namespace}_message`,
        channelName: `${namespace}_channel`,
        pollInterval: { seconds: 1 },
      });
      const kv = new PostgresKvStore(sql, { tableName: `${namespace}_kv` });
      return {
        queue,
        kv,
        async close() {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
          await sql.unsafe(`DROP TABLE IF EXISTS "${namespace}_message", "${namespace}_kv"`);
          await sql.end({ timeout: 5 });
        },
      };
    },
  },
  {
    name: "new AmqpMessageQueue(connection)",
    async open(namespace) {
      const connection = await connect(AMQP_URL);
      connection.on("error", () => {});
      const queue = new AmqpMessageQueue(connection, {
        queue: namespace,
        durable: false,
        ordering: { partitions: 2 },
      });
      return {
        queue,
        // AMQP has no store; Fedwork's in-memory one stands beside it.
        kv: new MemoryKvStore(),
        async close() {
          await queue.deleteQueues();
          await queue[Symbol.asyncDispose]();
          const channel = await connection.createChannel();
          await channel.close();
          await connection.close();
        },
      };
    },
  },
  {
    name: "new DenoKvMessageQueue(kv) and new DenoKvStore(kv)",
    async open(namespace) {
      const path = join(tmpdir(), `${namespace}.denokv`);
      const denoKv = await openDenoKv(path);
      const queue = new DenoKvMessageQueue(denoKv, { pollInterval: { milliseconds: 100 } });
      const kv = new DenoKvStore(denoKv);
      return {
        queue,
        kv,
        async close() {
          await queue[Symbol.asyncDispose]();
          await kv[Symbol.asyncDispose]();
          await denoKv.get(["still", "open"]);
          denoKv.close();
          await removeFiles(path);
        },
      };
    },
  },
];
