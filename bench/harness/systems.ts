// The systems the harness knows, grouped by scenario.  Each one is loaded
// only in the child process that measures it.
import { type Driver, type Sizes, TASK_MESSAGE_BYTES, withBodySize } from "./driver.ts";
import { namespaced } from "./namespace.ts";

/** What a system is, for the report. */
export type SystemKind =
  /** Fedwork typed tasks: the system the targets are about. */
  | "fedwork"
  /**
   * Fedwork typed tasks with task status records off
   * (`taskStatusRetention: 0`): what the records cost.
   */
  | "fedwork-no-records"
  /**
   * Fedwork typed tasks with the records (and cancellation markers) in a
   * key–value store on the same engine rather than in memory: what they
   * cost in round trips.
   */
  | "fedwork-kv"
  /**
   * Fedwork typed tasks whose handler gets many payloads per run
   * (`handleMany`): what batch handlers recover of the raw queue's speed.
   */
  | "fedwork-many"
  /** Fedwork's raw MessageQueue API on the same engine. */
  | "fedwork-raw"
  /** Another job queue library. */
  | "peer"
  /** A bare loop on the engine: what the engine allows at best. */
  | "limit";

export interface SystemSpec {
  readonly id: string;
  readonly scenario: Scenario;
  readonly label: string;
  readonly kind: SystemKind;
  /** The npm package whose version the report shows, for peers. */
  readonly packageName?: string;
  readonly load: () => Promise<Driver>;
}

export const SCENARIOS = ["redis", "postgres", "sqlite", "amqp", "in-process"] as const;
export type Scenario = typeof SCENARIOS[number];

const redis = () => import("./systems/redis.ts");
const pg = () => import("./systems/postgres.ts");
const amqp = () => import("./systems/amqp.ts");
const local = () => import("./systems/local.ts");
const fedwork = () => import("./systems/fedwork.ts");

/** The federation option of the `fedwork-no-records` systems. */
const NO_RECORDS = { taskStatusRetention: 0 } as const;
/** The task option of the `fedwork-many` systems. */
const MANY = { handleMany: { size: 50, wait: { milliseconds: 5 } } } as const;

export const SYSTEMS: readonly SystemSpec[] = [
  {
    id: "fedwork-redis",
    scenario: "redis",
    label: "Fedwork typed tasks (Redis)",
    kind: "fedwork",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await redis()).fedworkRedisSource((await redis()).REDIS_DATABASES["fedwork-tasks"]),
      ),
  },
  {
    id: "fedwork-redis-no-records",
    scenario: "redis",
    label: "Fedwork typed tasks, no status records (Redis)",
    kind: "fedwork-no-records",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await redis()).fedworkRedisSource((await redis()).REDIS_DATABASES["fedwork-no-records"]),
        NO_RECORDS,
      ),
  },
  {
    id: "fedwork-redis-kv",
    scenario: "redis",
    label: "Fedwork typed tasks, RedisKvStore (Redis)",
    kind: "fedwork-kv",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await redis()).fedworkRedisSource((await redis()).REDIS_DATABASES["fedwork-kv"], {
          kv: true,
        }),
      ),
  },
  {
    id: "fedwork-redis-many",
    scenario: "redis",
    label: "Fedwork typed tasks, handleMany 50 (Redis)",
    kind: "fedwork-many",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await redis()).fedworkRedisSource((await redis()).REDIS_DATABASES["fedwork-many"]),
        {},
        MANY,
      ),
  },
  {
    id: "fedwork-redis-raw",
    scenario: "redis",
    label: "Fedwork RedisMessageQueue (raw)",
    kind: "fedwork-raw",
    load: async () =>
      (await fedwork()).rawQueueDriver(
        (await redis()).fedworkRedisSource((await redis()).REDIS_DATABASES["fedwork-raw"]),
      ),
  },
  {
    id: "bullmq",
    scenario: "redis",
    label: "BullMQ",
    kind: "peer",
    packageName: "bullmq",
    load: async () => (await redis()).bullmqDriver(),
  },
  {
    id: "ioredis-list",
    scenario: "redis",
    label: "ioredis LPUSH/RPOP loop",
    kind: "limit",
    packageName: "ioredis",
    load: async () => (await redis()).ioredisListDriver(),
  },
  {
    id: "fedwork-postgres",
    scenario: "postgres",
    label: "Fedwork typed tasks (PostgreSQL)",
    kind: "fedwork",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await pg()).fedworkPostgresSource(namespaced("bench_fedwork_tasks")),
      ),
  },
  {
    id: "fedwork-postgres-no-records",
    scenario: "postgres",
    label: "Fedwork typed tasks, no status records (PostgreSQL)",
    kind: "fedwork-no-records",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await pg()).fedworkPostgresSource(namespaced("bench_fedwork_no_records")),
        NO_RECORDS,
      ),
  },
  {
    id: "fedwork-postgres-kv",
    scenario: "postgres",
    label: "Fedwork typed tasks, PostgresKvStore (PostgreSQL)",
    kind: "fedwork-kv",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await pg()).fedworkPostgresSource(namespaced("bench_fedwork_kv"), { kv: true }),
      ),
  },
  {
    id: "fedwork-postgres-many",
    scenario: "postgres",
    label: "Fedwork typed tasks, handleMany 50 (PostgreSQL)",
    kind: "fedwork-many",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await pg()).fedworkPostgresSource(namespaced("bench_fedwork_many")),
        {},
        MANY,
      ),
  },
  {
    id: "fedwork-postgres-raw",
    scenario: "postgres",
    label: "Fedwork PostgresMessageQueue (raw)",
    kind: "fedwork-raw",
    load: async () =>
      (await fedwork()).rawQueueDriver(
        (await pg()).fedworkPostgresSource(namespaced("bench_fedwork_raw")),
      ),
  },
  {
    id: "graphile-worker",
    scenario: "postgres",
    label: "graphile-worker (default)",
    kind: "peer",
    packageName: "graphile-worker",
    load: async () => (await pg()).graphileDriver(namespaced("bench_graphile"), false),
  },
  {
    id: "graphile-worker-batched",
    scenario: "postgres",
    label: "graphile-worker (local queue + batched completion)",
    kind: "peer",
    packageName: "graphile-worker",
    load: async () => (await pg()).graphileDriver(namespaced("bench_graphile_batched"), true),
  },
  {
    id: "pg-boss",
    scenario: "postgres",
    label: "pg-boss",
    kind: "peer",
    packageName: "pg-boss",
    load: async () => (await pg()).pgBossDriver(namespaced("bench_pgboss")),
  },
  {
    id: "pg-skip-locked",
    scenario: "postgres",
    label: "postgres.js SKIP LOCKED loop",
    kind: "limit",
    packageName: "postgres",
    load: async () => (await pg()).skipLockedDriver(namespaced("bench_skip_locked")),
  },
  {
    id: "fedwork-sqlite",
    scenario: "sqlite",
    label: "Fedwork typed tasks (SQLite)",
    kind: "fedwork",
    load: async () => (await fedwork()).typedTaskDriver((await local()).fedworkSqliteSource()),
  },
  {
    id: "fedwork-sqlite-no-records",
    scenario: "sqlite",
    label: "Fedwork typed tasks, no status records (SQLite)",
    kind: "fedwork-no-records",
    load: async () =>
      (await fedwork()).typedTaskDriver((await local()).fedworkSqliteSource(), NO_RECORDS),
  },
  {
    id: "fedwork-sqlite-many",
    scenario: "sqlite",
    label: "Fedwork typed tasks, handleMany 50 (SQLite)",
    kind: "fedwork-many",
    load: async () =>
      (await fedwork()).typedTaskDriver((await local()).fedworkSqliteSource(), {}, MANY),
  },
  {
    id: "fedwork-sqlite-raw",
    scenario: "sqlite",
    label: "Fedwork SqliteMessageQueue (raw)",
    kind: "fedwork-raw",
    load: async () => (await fedwork()).rawQueueDriver((await local()).fedworkSqliteSource()),
  },
  {
    id: "fedwork-sqlite-raw-sized",
    scenario: "sqlite",
    label: `Fedwork SqliteMessageQueue (raw), ${TASK_MESSAGE_BYTES}-byte bodies`,
    kind: "fedwork-raw",
    load: async () =>
      withBodySize(
        (await fedwork()).rawQueueDriver((await local()).fedworkSqliteSource()),
        TASK_MESSAGE_BYTES,
      ),
  },
  {
    id: "fedwork-amqp",
    scenario: "amqp",
    label: "Fedwork typed tasks (RabbitMQ)",
    kind: "fedwork",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await amqp()).fedworkAmqpSource(namespaced("fedwork-bench-tasks", "-")),
      ),
  },
  {
    id: "fedwork-amqp-no-records",
    scenario: "amqp",
    label: "Fedwork typed tasks, no status records (RabbitMQ)",
    kind: "fedwork-no-records",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await amqp()).fedworkAmqpSource(namespaced("fedwork-bench-no-records", "-")),
        NO_RECORDS,
      ),
  },
  {
    id: "fedwork-amqp-many",
    scenario: "amqp",
    label: "Fedwork typed tasks, handleMany 50 (RabbitMQ)",
    kind: "fedwork-many",
    load: async () =>
      (await fedwork()).typedTaskDriver(
        (await amqp()).fedworkAmqpSource(namespaced("fedwork-bench-many", "-")),
        {},
        MANY,
      ),
  },
  {
    id: "fedwork-amqp-raw",
    scenario: "amqp",
    label: "Fedwork AmqpMessageQueue (raw)",
    kind: "fedwork-raw",
    load: async () =>
      (await fedwork()).rawQueueDriver(
        (await amqp()).fedworkAmqpSource(namespaced("fedwork-bench-raw", "-")),
      ),
  },
  {
    id: "fedwork-amqp-raw-sized",
    scenario: "amqp",
    label: `Fedwork AmqpMessageQueue (raw), ${TASK_MESSAGE_BYTES}-byte bodies`,
    kind: "fedwork-raw",
    load: async () =>
      withBodySize(
        (await fedwork()).rawQueueDriver(
          (await amqp()).fedworkAmqpSource(namespaced("fedwork-bench-raw-sized", "-")),
        ),
        TASK_MESSAGE_BYTES,
      ),
  },
  {
    id: "amqplib",
    scenario: "amqp",
    label: "amqplib (same prefetch)",
    kind: "peer",
    packageName: "amqplib",
    load: async () => (await amqp()).amqplibDriver(namespaced("fedwork-bench-amqplib", "-")),
  },
  {
    id: "amqplib-sized",
    scenario: "amqp",
    label: `amqplib (same prefetch), ${TASK_MESSAGE_BYTES}-byte bodies`,
    kind: "peer",
    packageName: "amqplib",
    load: async () =>
      withBodySize(
        (await amqp()).amqplibDriver(namespaced("fedwork-bench-amqplib-sized", "-")),
        TASK_MESSAGE_BYTES,
      ),
  },
  {
    id: "fedwork-in-process",
    scenario: "in-process",
    label: "Fedwork typed tasks (in-process)",
    kind: "fedwork",
    load: async () => (await fedwork()).typedTaskDriver((await local()).fedworkInProcessSource()),
  },
  {
    id: "fedwork-in-process-no-records",
    scenario: "in-process",
    label: "Fedwork typed tasks, no status records (in-process)",
    kind: "fedwork-no-records",
    load: async () =>
      (await fedwork()).typedTaskDriver((await local()).fedworkInProcessSource(), NO_RECORDS),
  },
  {
    id: "fedwork-in-process-raw",
    scenario: "in-process",
    label: "Fedwork InProcessMessageQueue (raw)",
    kind: "fedwork-raw",
    load: async () => (await fedwork()).rawQueueDriver((await local()).fedworkInProcessSource()),
  },
  {
    id: "bare-loop",
    scenario: "in-process",
    label: "bare in-process loop",
    kind: "limit",
    load: async () => (await local()).bareLoopDriver(),
  },
];

export type Size = "smoke" | "full";

/** The sizes of each scenario. */
export function sizesFor(scenario: Scenario, size: Size): Sizes {
  const inProcess = scenario === "in-process";
  if (size === "smoke") {
    return {
      enqueue: inProcess ? 2_000 : 200,
      drain: inProcess ? 2_000 : 200,
      drainBudgetMs: 60_000,
      warmUp: inProcess ? 2_000 : 200,
      warmUpBudgetMs: 10_000,
      pickup: 10,
      pickupRate: 100,
      chunk: 100,
      handlerWork: inProcess ? 2048 : 0,
    };
  }
  return {
    // The in-process target is about 100,000 tasks, each doing some work
    // (hashing 2 KiB, a few microseconds), against a bare loop doing the same; it
    // is drained to the end.  Elsewhere handlers only count, and a drain is
    // timed for at most 6 s (a slow system at concurrency 1 would otherwise
    // take most of the run).
    enqueue: inProcess ? 100_000 : 5_000,
    drain: inProcess ? 100_000 : 20_000,
    drainBudgetMs: inProcess ? 300_000 : 6_000,
    // Warm-up: one drain in process (100,000 messages), on a server
    // drains of 20,000 until 40,000 messages or 5 s.
    warmUp: inProcess ? 100_000 : 40_000,
    warmUpBudgetMs: 5_000,
    pickup: 200,
    pickupRate: 100,
    chunk: 1_000,
    handlerWork: inProcess ? 2048 : 0,
  };
}
