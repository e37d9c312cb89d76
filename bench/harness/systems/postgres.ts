// PostgreSQL: Fedwork's PostgresMessageQueue, graphile-worker (default and
// with its local batching), pg-boss, and a bare `FOR UPDATE SKIP LOCKED`
// loop.  Each system lives in a schema of its own (`bench_<system>`),
// dropped before every measurement, so that nothing it leaves behind meets
// the tests (which use tables in the search path) or another system.
import { PostgresKvStore, PostgresMessageQueue } from "@fedwork/postgres";
import { Logger, makeWorkerUtils, run, type WorkerUtils } from "graphile-worker";
import process from "node:process";
import { PgBoss } from "pg-boss";
import postgres from "postgres";
import type { Driver, Payload, Workers } from "../driver.ts";
import type { QueueSource } from "./fedwork.ts";

const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

async function recreateSchema(schema: string, create = true): Promise<void> {
  const sql = postgres(POSTGRES_URL, { onnotice: () => {}, max: 1 });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    if (create) await sql.unsafe(`CREATE SCHEMA "${schema}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** PostgresMessageQueue instances on a table in `schema`. */
export function fedworkPostgresSource(schema: string, options: { kv?: boolean } = {}): QueueSource {
  const open: AsyncDisposable[] = [];
  let producer: PostgresMessageQueue | undefined;
  const make = (concurrency?: number) => {
    const queue = new PostgresMessageQueue(POSTGRES_URL, {
      schema,
      tableName: "bench",
      ...(concurrency == null ? {} : { concurrency }),
    });
    open.push(queue);
    return queue;
  };
  // Records, markers and the queue in one schema: a deployment on
  // PostgreSQL alone.
  const makeKv = () => {
    const kv = new PostgresKvStore(POSTGRES_URL, { schema });
    open.push(kv);
    return kv;
  };
  const closeAll = async () => {
    producer = undefined;
    await Promise.all(open.splice(0).map((q) => q[Symbol.asyncDispose]()));
  };
  return {
    async reset() {
      await closeAll();
      await recreateSchema(schema);
      // Create the tables now, so that no measurement pays for them.
      await make().initialize();
      if (options.kv) await makeKv().get(["bench"]);
    },
    producer: () => producer ??= make(),
    consumer: (concurrency) => make(concurrency),
    close: closeAll,
    ...(options.kv ? { kv: makeKv } : {}),
  };
}

const quietLogger = new Logger(() => () => {});

/**
 * graphile-worker, as it comes (`batched: false`), or with its batching
 * settings on (`batched: true`): a local queue that fetches and locks up to
 * 500 jobs per query, and completions and failures batched per tick.
 */
export function graphileDriver(schema: string, batched: boolean): Driver {
  let utils: WorkerUtils | undefined;
  const utilsFor = async () =>
    utils ??= await makeWorkerUtils({
      connectionString: POSTGRES_URL,
      schema,
      logger: quietLogger,
    });
  const release = async () => {
    await utils?.release();
    utils = undefined;
  };
  return {
    async reset() {
      await release();
      await recreateSchema(schema, false);
      await (await utilsFor()).migrate();
    },
    async enqueueBulk(payloads, chunk) {
      const u = await utilsFor();
      for (let i = 0; i < payloads.length; i += chunk) {
        await u.addJobs(
          payloads.slice(i, i + chunk).map((payload) => ({
            identifier: "bench",
            payload,
          })),
        );
      }
    },
    async enqueueOne(payload) {
      await (await utilsFor()).addJob("bench", payload);
    },
    async work(concurrency, handler) {
      const runner = await run({
        connectionString: POSTGRES_URL,
        schema,
        concurrency,
        // The pool its documentation asks for: at least one connection per
        // concurrent job.
        maxPoolSize: Math.max(10, concurrency + 2),
        noHandleSignals: true,
        logger: quietLogger,
        taskList: {
          bench: (payload) => {
            handler(payload as Payload);
            return Promise.resolve();
          },
        },
        ...(batched
          ? {
            preset: {
              worker: {
                localQueue: { size: 500 },
                completeJobBatchDelay: 0,
                failJobBatchDelay: 0,
              },
            },
          }
          : {}),
      });
      return {
        async stop() {
          await runner.stop();
          // stop() can resolve while a batch of completions is still being
          // written; the next reset drops the schema under it otherwise.
          await runner.promise;
        },
      };
    },
    close: release,
  };
}

/**
 * pg-boss with LISTEN/NOTIFY wake-ups (`useListenNotify`, `notify: true`)
 * and batched fetches (see `work()`).
 */
export function pgBossDriver(schema: string): Driver {
  let boss: PgBoss | undefined;
  const start = async () => {
    if (boss != null) return boss;
    const b = new PgBoss({
      connectionString: POSTGRES_URL,
      schema,
      useListenNotify: true,
      supervise: false,
      schedule: false,
    });
    b.on("error", (error) => console.error("pg-boss:", error));
    await b.start();
    await b.createQueue("bench", { notify: true });
    return boss = b;
  };
  const stopBoss = async () => {
    await boss?.stop({ graceful: false, close: true });
    boss = undefined;
  };
  return {
    async reset() {
      await stopBoss();
      await recreateSchema(schema, false);
      await start();
    },
    async enqueueBulk(payloads, chunk) {
      const b = await start();
      for (let i = 0; i < payloads.length; i += chunk) {
        await b.insert("bench", payloads.slice(i, i + chunk).map((data) => ({ data })));
      }
    },
    async enqueueOne(payload) {
      await (await start()).send("bench", payload);
    },
    async work(concurrency, handler) {
      const b = await start();
      // Each of `concurrency` workers fetches up to 20 jobs at a time and
      // runs them one after another; a full batch fetches again at once
      // (pg-boss otherwise waits its polling interval between fetches).
      const options = {
        localConcurrency: concurrency,
        batchSize: 20,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: 0.5,
      };
      const id = await b.work<Payload>("bench", options, (jobs) => {
        for (const job of jobs) handler(job.data);
        return Promise.resolve();
      });
      return { stop: () => b.offWork("bench", { id, wait: true }) } satisfies Workers;
    },
    close: stopBoss,
  };
}

/**
 * The engine's limit for a table-based queue: one statement per message
 * (`DELETE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1)
 * RETURNING`), one connection per worker, woken by LISTEN/NOTIFY when the
 * table is empty.  No leases, no acknowledgements after the handler.
 */
export function skipLockedDriver(schema: string): Driver {
  const table = `"${schema}".jobs`;
  const channel = `${schema}_jobs`;
  let sql: postgres.Sql | undefined;
  const sqlFor = () => sql ??= postgres(POSTGRES_URL, { onnotice: () => {}, max: 4 });
  return {
    async reset() {
      await recreateSchema(schema);
      await sqlFor().unsafe(
        `CREATE TABLE ${table} (id bigserial PRIMARY KEY, payload jsonb NOT NULL)`,
      );
    },
    async enqueueBulk(payloads, chunk) {
      const db = sqlFor();
      for (let i = 0; i < payloads.length; i += chunk) {
        const texts = payloads.slice(i, i + chunk).map((p) => JSON.stringify(p));
        await db.unsafe(
          `INSERT INTO ${table} (payload) SELECT unnest($1::text[])::jsonb`,
          [texts] as never,
        );
      }
      await db.notify(channel, "");
    },
    async enqueueOne(payload) {
      await sqlFor().unsafe(
        `WITH i AS (INSERT INTO ${table} (payload) VALUES ($1::text::jsonb)) SELECT pg_notify($2, '')`,
        [JSON.stringify(payload), channel],
      );
    },
    async work(concurrency, handler) {
      const workersSql = postgres(POSTGRES_URL, { onnotice: () => {}, max: concurrency });
      let stopped = false;
      let wake: (() => void)[] = [];
      const wakeAll = () => {
        const waiting = wake;
        wake = [];
        for (const w of waiting) w();
      };
      // Open every connection before the clock starts.
      await Promise.all(Array.from({ length: concurrency }, () => workersSql`SELECT 1`));
      const listener = await workersSql.listen(channel, wakeAll);
      const claim = `DELETE FROM ${table} WHERE id = (SELECT id FROM ${table} ORDER BY id ` +
        `FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING payload`;
      const loops = Array.from({ length: concurrency }, async () => {
        while (!stopped) {
          const rows = await workersSql.unsafe<{ payload: Payload }[]>(claim);
          if (rows.length === 0) {
            await new Promise<void>((resolve) => {
              wake.push(resolve);
              setTimeout(resolve, 250);
            });
            continue;
          }
          handler(rows[0].payload);
        }
      });
      return {
        async stop() {
          stopped = true;
          wakeAll();
          await Promise.all(loops);
          await listener.unlisten();
          await workersSql.end({ timeout: 5 });
        },
      };
    },
    async close() {
      await sql?.end({ timeout: 5 });
    },
  };
}
