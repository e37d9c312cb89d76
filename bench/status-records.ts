// What task status records cost when the key–value store is a real one
// (not a test):
//   node -C fedwork-source bench/status-records.ts [--concurrency 1,10]
//        [--tasks 4000] [--trials 3]
// Typed tasks on a RedisMessageQueue with a RedisKvStore (REDIS_URL's host,
// database 5, flushed before each trial), with the records on (the
// default) and off (`taskStatusRetention: 0`), trials alternating between
// the two.  Each trial enqueues the tasks with enqueueTaskMany(), then
// starts a worker and times the drain from the first handler to the last.
// Prints tasks per second, median (min–max), and the ratio off / on.
import { Redis } from "ioredis";
import process from "node:process";
import { createFederation, type FederationOptions } from "@fedwork/core";
import { RedisKvStore, RedisMessageQueue } from "@fedwork/redis";

function listArgument(name: string, fallback: number[]): number[] {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  return process.argv[index + 1].split(",").map(Number);
}

const CONCURRENCY = listArgument("concurrency", [1, 10]);
const TASKS = listArgument("tasks", [4_000])[0];
const TRIALS = listArgument("trials", [3])[0];
const url = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
url.pathname = "/5";

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

type Variant = Pick<FederationOptions<void>, "taskStatusRetention">;

async function trial(concurrency: number, variant: Variant): Promise<number> {
  const redis = new Redis(url.href);
  await redis.flushdb();
  redis.disconnect();
  const open: AsyncDisposable[] = [];
  const track = <T extends AsyncDisposable>(resource: T) => (open.push(resource), resource);
  try {
    const sender = createFederation<void>({
      ...variant,
      kv: track(new RedisKvStore({ url: url.href })),
      queue: { task: track(new RedisMessageQueue({ url: url.href, queue: "bench" })) },
      manuallyStartQueue: true,
    });
    const task = sender.defineTask("bench", { schema, handler() {} });
    const ctx = sender.createContext(new URL("https://bench.example/"), undefined);
    for (let i = 0; i < TASKS; i += 1_000) {
      const chunk = Array.from({ length: Math.min(1_000, TASKS - i) }, (_, k) => ({ i: i + k }));
      await ctx.enqueueTaskMany(task, chunk);
    }
    const worker = createFederation<void>({
      ...variant,
      kv: track(new RedisKvStore({ url: url.href })),
      queue: {
        task: track(new RedisMessageQueue({ url: url.href, queue: "bench", concurrency })),
      },
      manuallyStartQueue: true,
    });
    let handled = 0;
    let first = 0;
    let last = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => finish = resolve);
    worker.defineTask("bench", {
      schema,
      handler() {
        last = performance.now();
        if (handled === 0) first = last;
        if (++handled === TASKS) finish();
      },
    });
    const controller = new AbortController();
    const running = worker.startQueue(undefined, { signal: controller.signal });
    await finished;
    controller.abort();
    await running;
    return (TASKS - 1) / (last - first) * 1_000;
  } finally {
    for (const resource of open) await resource[Symbol.asyncDispose]();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const describe = (values: number[]) =>
  `${Math.round(median(values))}/s (${Math.round(Math.min(...values))}–${
    Math.round(Math.max(...values))
  })`;

console.log(`Node.js ${process.versions.node}, ${TASKS} typed tasks, Redis queue and KV store`);
for (const concurrency of CONCURRENCY) {
  const on: number[] = [];
  const off: number[] = [];
  for (let t = 0; t < TRIALS; t++) {
    on.push(await trial(concurrency, {}));
    off.push(await trial(concurrency, { taskStatusRetention: 0 }));
  }
  console.log(
    `C=${concurrency}: records on ${describe(on)}, off ${describe(off)}; ` +
      `off / on ${(median(off) / median(on)).toFixed(2)}×`,
  );
}
