// What a durable step costs:
//   node -C fedwork-source bench/durable-steps.ts [--engine memory,sqlite,postgres,redis]
//        [--steps 10] [--tasks 200] [--trials 3]
// Per engine, a worker drains `tasks` typed tasks one at a time (each a
// plain handler, or one made of `steps` ctx.step.run() steps that return a
// small object), with the engine's own queue and KvStore; trials alternate
// between the two.  Prints the time per task, median (min–max), the cost
// per step, (steps task - plain task) / steps, and beside it what one
// kv.set() of a step record costs on the engine, measured alone: a step
// costs one such write, plus encoding its result.  "memory" is a
// MemoryKvStore with an InProcessMessageQueue: what a step costs in CPU.
import process from "node:process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rm } from "node:fs/promises";
import {
  createFederation,
  InProcessMessageQueue,
  type KvStore,
  MemoryKvStore,
  type MessageQueue,
} from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue } from "@fedwork/sqlite";
import { PostgresKvStore, PostgresMessageQueue } from "@fedwork/postgres";
import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";

function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : process.argv[index + 1];
}

const ENGINES = argument("engine", "memory,sqlite,postgres,redis").split(",");
const STEPS = Number(argument("steps", "10"));
const TASKS = Number(argument("tasks", "200"));
const TRIALS = Number(argument("trials", "3"));
const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

interface Engines {
  readonly kv: KvStore & AsyncDisposable;
  readonly queue: MessageQueue & AsyncDisposable;
  cleanup(): Promise<void>;
}

function open(engine: string, name: string): Engines {
  switch (engine) {
    case "memory":
      return {
        kv: Object.assign(new MemoryKvStore(), { [Symbol.asyncDispose]: () => Promise.resolve() }),
        queue: new InProcessMessageQueue(),
        cleanup: () => Promise.resolve(),
      };
    case "sqlite": {
      const path = join(tmpdir(), `${name}.sqlite`);
      return {
        kv: new SqliteKvStore({ path }),
        queue: new SqliteMessageQueue({ path, pollInterval: { milliseconds: 50 } }),
        cleanup: async () => {
          for (const suffix of ["", "-wal", "-shm"]) await rm(path + suffix, { force: true });
        },
      };
    }
    case "postgres":
      return {
        kv: new PostgresKvStore(POSTGRES_URL, { tableName: `${name}_kv` }),
        queue: new PostgresMessageQueue(POSTGRES_URL, { tableName: name }),
        cleanup: () => Promise.resolve(),
      };
    case "redis":
      return {
        kv: new RedisKvStore({ url: REDIS_URL, prefix: name }),
        queue: new RedisMessageQueue({ url: REDIS_URL, queue: name }),
        cleanup: () => Promise.resolve(),
      };
    default:
      throw new TypeError(`Unknown engine ${engine}; use sqlite, postgres or redis.`);
  }
}

interface Payload {
  i: number;
}
// A Standard Schema by hand, so that the measurement is of Fedwork rather
// than of a schema library.
const schema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (value: unknown) => ({ value: value as Payload }),
    types: undefined as unknown as { input: Payload; output: Payload },
  },
};

/** Milliseconds per task, from the first handler start to the last handler end. */
async function trial(engine: string, steps: number): Promise<number> {
  const name = `bench_steps_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const engines = open(engine, name);
  try {
    const federation = createFederation<void>({
      kv: engines.kv,
      queue: engines.queue,
      manuallyStartQueue: true,
    });
    let handled = 0;
    let first = 0;
    let last = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => finish = resolve);
    const task = federation.defineTask("bench-steps", {
      schema,
      async handler(ctx, data) {
        if (handled === 0) first = performance.now();
        for (let s = 0; s < steps; s++) {
          await ctx.step.run(`step-${s}`, () => ({ i: data.i, s }));
        }
        last = performance.now();
        if (++handled === TASKS) finish();
      },
    });
    const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
    await ctx.enqueueTaskMany(task, Array.from({ length: TASKS }, (_, i) => ({ i })));
    const controller = new AbortController();
    const running = federation.startQueue(undefined, { signal: controller.signal });
    await finished;
    controller.abort();
    await running;
    return (last - first) / TASKS;
  } finally {
    await engines.queue[Symbol.asyncDispose]();
    await engines.kv[Symbol.asyncDispose]();
    await engines.cleanup();
  }
}

/** Milliseconds per kv.set() of a step record of `steps` small steps, alone. */
async function setCost(engine: string, steps: number): Promise<number> {
  const name = `bench_set_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const engines = open(engine, name);
  try {
    const record = {
      v: 1,
      gen: 0,
      steps: Array.from({ length: steps }, (_, s) => ({
        id: `step-${s}`,
        kind: "run",
        done: true,
        value: '[{"i":1,"s":2},1,2]',
        at: Date.now(),
      })),
    };
    await engines.kv.set(["warm-up"], 1);
    const writes = 200;
    const started = performance.now();
    for (let i = 0; i < writes; i++) {
      await engines.kv.set(["fedwork", "steps", "state", name], record, {
        ttl: { hours: 1 },
      });
    }
    return (performance.now() - started) / writes;
  } finally {
    await engines.queue[Symbol.asyncDispose]();
    await engines.kv[Symbol.asyncDispose]();
    await engines.cleanup();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const describe = (values: number[]) =>
  `${median(values).toFixed(2)} ms (${Math.min(...values).toFixed(2)}–${
    Math.max(...values).toFixed(2)
  })`;

console.log(
  `Node.js ${process.versions.node}, ${TASKS} tasks one at a time, ${STEPS} run() steps vs none`,
);
for (const engine of ENGINES) {
  const plain: number[] = [];
  const stepped: number[] = [];
  for (let t = 0; t < TRIALS; t++) {
    plain.push(await trial(engine, 0));
    stepped.push(await trial(engine, STEPS));
  }
  const perStep = (median(stepped) - median(plain)) / STEPS;
  const set = await setCost(engine, STEPS);
  console.log(
    `${engine}: plain ${describe(plain)}/task, ${STEPS} steps ${describe(stepped)}/task; ` +
      `${perStep.toFixed(3)} ms per step; one kv.set() of the record ${set.toFixed(3)} ms`,
  );
}
