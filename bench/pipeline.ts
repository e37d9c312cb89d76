// A quick measurement of the processing pipeline (not a test): typed tasks
// run through a federation on an in-process queue and on a SQLite file, all
// succeeding, and all failing once before succeeding (the retry path).
// Prints tasks per second, and the pipeline's CPU cost per run of a
// trivial task over a bare function call (decode, validate, context,
// dispatch, outcome); compare runs of two commits on one machine.
//
// Usage: node_modules/.bin/node bench/pipeline.ts   (or deno run -A / bun)
import process from "node:process";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createFederation,
  encodeTaskPayload,
  InProcessMessageQueue,
  MemoryKvStore,
  type MessageQueue,
  millisecondsToDuration,
} from "@fedwork/core";
import { SqliteMessageQueue } from "@fedwork/sqlite";

const TASKS = 10_000;
const TRIALS = 3;
// `TASK_STATUS=off` measures without task status records and updates
// (`taskStatusRetention: 0`), to see what they cost.
const statusOptions = process.env.TASK_STATUS === "off" ? { taskStatusRetention: 0 as const } : {};

// A Standard Schema by hand, so that the measurement is of Fedwork rather
// than of a schema library.
const numberSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (value: unknown) =>
      typeof value === "number" ? { value } : { issues: [{ message: "Expected a number." }] },
    types: undefined as unknown as { input: number; output: number },
  },
};

async function drain(queue: MessageQueue, failOnce: boolean): Promise<number> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    taskRetryPolicy: () => millisecondsToDuration(0),
    ...statusOptions,
  });
  const failed = new Set<number>();
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  const task = federation.defineTask("bench", {
    schema: numberSchema,
    handler(_ctx, n) {
      if (failOnce && !failed.has(n)) {
        failed.add(n);
        throw new Error("first attempt fails");
      }
      if (++done === TASKS) finish();
    },
  });
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  await ctx.enqueueTaskMany(task, Array.from({ length: TASKS }, (_, i) => i));
  const controller = new AbortController();
  const start = performance.now();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  await finished;
  const seconds = (performance.now() - start) / 1000;
  controller.abort();
  await running;
  return TASKS / seconds;
}

async function sqliteQueue<T>(body: (queue: MessageQueue) => Promise<T>): Promise<T> {
  const path = join(tmpdir(), `fedwork-bench-${crypto.randomUUID()}.sqlite`);
  const queue = new SqliteMessageQueue({ path, concurrency: 8 });
  try {
    return await body(queue);
  } finally {
    await queue[Symbol.asyncDispose]();
    await Promise.all(["", "-wal", "-shm"].map((s) => rm(path + s, { force: true })));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// The framework logs every failed attempt at the warning level; LogTape is
// not configured here, so those calls cost almost nothing, as in an app
// that logs errors only.
const scenarios: [string, (failOnce: boolean) => Promise<number>][] = [
  ["in-process", (failOnce) => drain(new InProcessMessageQueue(), failOnce)],
  ["SQLite c=8", (failOnce) => sqliteQueue((queue) => drain(queue, failOnce))],
];
console.log(`${TASKS} typed tasks, median of ${TRIALS} trials, tasks/s`);
for (const [name, run] of scenarios) {
  for (const failOnce of [false, true]) {
    const rates: number[] = [];
    for (let i = 0; i < TRIALS; i++) rates.push(await run(failOnce));
    console.log(
      `${name.padEnd(12)} ${failOnce ? "fail once" : "succeed  "} ${
        Math.round(median(rates)).toLocaleString("en-US").padStart(8)
      }`,
    );
  }
}

// Per-run overhead: the whole worker side of one task (no queue: the
// message is handed over directly, as a push-based adapter would).
{
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue() },
    manuallyStartQueue: true,
    ...statusOptions,
  });
  let sum = 0;
  federation.defineTask("overhead", {
    schema: numberSchema,
    handler: (_ctx, n) => void (sum += n),
  });
  const message = {
    type: "task" as const,
    id: crypto.randomUUID(),
    baseUrl: "https://bench.example/",
    taskName: "overhead",
    data: await encodeTaskPayload(1),
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
  };
  const bare = (n: number) => Promise.resolve(void (sum += n));
  const runs = 100_000;
  const overheads: number[] = [];
  for (let trial = 0; trial < TRIALS + 1; trial++) {
    let start = performance.now();
    for (let i = 0; i < runs; i++) await federation.processQueuedMessage(undefined, message);
    const pipeline = (performance.now() - start) / runs;
    start = performance.now();
    for (let i = 0; i < runs; i++) await bare(1);
    const direct = (performance.now() - start) / runs;
    // The first trial warms the JIT up and is not counted.
    if (trial > 0) overheads.push((pipeline - direct) * 1000);
  }
  console.log(`per-run overhead over a bare call: ${median(overheads).toFixed(2)} µs`);
}
