// The adapters written for Fedify that the compatibility tests drive Fedwork
// with: @fedify/fedify's InProcessMessageQueue and ParallelMessageQueue, and
// @fedify/redis's and @fedify/postgres's queues.  Each factory returns a
// fresh queue isolated under a namespace, typed as Fedwork's MessageQueue:
// that the assignments type-check is part of what is tested.
import { InProcessMessageQueue, ParallelMessageQueue } from "@fedify/fedify";
import { PostgresMessageQueue } from "@fedify/postgres";
import { RedisMessageQueue } from "@fedify/redis";
import type { MessageQueue } from "@fedwork/core";
import { Redis } from "ioredis";
import postgres from "postgres";
import { POSTGRES_URL, REDIS_URL } from "./services.ts";

/** A queue written for Fedify, and how to get rid of it after a test. */
export interface FedifyQueue {
  readonly queue: MessageQueue;
  /** Closes connections and deletes what the test stored. */
  dispose(): Promise<void>;
}

/** One kind of Fedify queue. */
export interface FedifyQueueFactory {
  /** E.g. `"@fedify/fedify InProcessMessageQueue"`. */
  readonly name: string;
  /**
   * Whether the queue keeps messages that share an ordering key in order.
   * Fedify's InProcessMessageQueue does; its ParallelMessageQueue cannot see
   * the keys of an inner queue's messages, and the 1.8 Redis and PostgreSQL
   * queues predate ordering keys.
   */
  readonly ordersByKey: boolean;
  create(namespace: string): Promise<FedifyQueue>;
}

// @fedify/postgres 1.8.7 cancels its in-flight poll query when the signal of
// listen() aborts; a poll started by a NOTIFY is awaited by nothing, so its
// cancelled query (SQLSTATE 57014) becomes an unhandled rejection, which
// Deno and Bun count against the running test.  This wrapper hands the
// queue's listen() a signal of its own and aborts it only once the queue
// has been quiet for a while, when no NOTIFY poll is running; the
// cancellation of a poll of its own loop rejects listen(), caught here.
const QUIET_MS = 500;

function stoppingQuietly(queue: MessageQueue): MessageQueue {
  return {
    enqueue: (message, options) => queue.enqueue(message, options),
    enqueueMany: (messages, options) => queue.enqueueMany!(messages, options),
    async listen(handler, options = {}) {
      const inner = new AbortController();
      const listening = queue.listen(handler, { signal: inner.signal }).catch(() => {});
      const { signal } = options;
      if (signal != null && !signal.aborted) {
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      }
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      inner.abort();
      await listening;
    },
  };
}

// When listen() stops, @fedify/postgres 1.8.7 calls unlisten() without
// awaiting it; postgres.js sends that UNLISTEN on its one listening
// connection, and sql.end() ends that connection with no grace, so an
// UNLISTEN still in flight (a loaded machine) is rejected with
// CONNECTION_DESTROYED and nothing catches it.  Queries on that connection
// run in order, so a LISTEN of our own that has been answered means the
// queue's UNLISTEN has been answered too.
async function drainListenConnection(sql: postgres.Sql, namespace: string): Promise<void> {
  const drain = await sql.listen(`${namespace}_drain`, () => {});
  await drain.unlisten();
}

// Fedify's own pollers default to 5 s; delayed messages would wait that long.
const POLL_INTERVAL = { milliseconds: 100 };

export const FEDIFY_QUEUES: readonly FedifyQueueFactory[] = [
  {
    name: "@fedify/fedify InProcessMessageQueue",
    ordersByKey: true,
    create: () =>
      Promise.resolve({
        queue: new InProcessMessageQueue({ pollInterval: POLL_INTERVAL }),
        dispose: () => Promise.resolve(),
      }),
  },
  {
    name: "@fedify/fedify ParallelMessageQueue",
    ordersByKey: false,
    create: () =>
      Promise.resolve({
        queue: new ParallelMessageQueue(
          new InProcessMessageQueue({ pollInterval: POLL_INTERVAL }),
          4,
        ),
        dispose: () => Promise.resolve(),
      }),
  },
  {
    name: "@fedify/redis RedisMessageQueue",
    ordersByKey: false,
    create(namespace) {
      const clients: Redis[] = [];
      const queue = new RedisMessageQueue(() => {
        const client = new Redis(REDIS_URL);
        clients.push(client);
        return client;
      }, {
        queueKey: `${namespace}:queue`,
        lockKey: `${namespace}:lock`,
        channelKey: `${namespace}:channel`,
        // Not shorter: it locks for floor(2 × pollInterval) seconds, and a
        // zero-second lock is an error that stops every poll.
        pollInterval: { seconds: 1 },
      });
      return Promise.resolve({
        queue,
        async dispose() {
          // The queue's first client issues its commands; the second subscribes.
          await clients[0].del(`${namespace}:queue`, `${namespace}:lock`);
          queue[Symbol.dispose](); // Disconnects both clients.
        },
      });
    },
  },
  {
    name: "@fedify/postgres PostgresMessageQueue",
    ordersByKey: false,
    async create(namespace) {
      const sql = postgres(POSTGRES_URL, { onnotice: () => {} });
      const queue = new PostgresMessageQueue(sql, {
        tableName: namespace,
        channelName: namespace,
        pollInterval: POLL_INTERVAL,
      });
      // Its enqueue() and listen() each create the table on first use, and
      // two concurrent CREATE TABLE IF NOT EXISTS can collide; create it once.
      await queue.initialize();
      return {
        // Fedify's queue typed as Fedwork's: the assignment is checked.
        queue: stoppingQuietly(queue),
        async dispose() {
          await sql.unsafe(`DROP TABLE IF EXISTS "${namespace}"`);
          await drainListenConnection(sql, namespace);
          await sql.end({ timeout: 5 });
        },
      };
    },
  },
];
