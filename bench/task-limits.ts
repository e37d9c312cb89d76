// What the task limits cost a task (not a test): drains the same tasks
// through a federation on an in-process queue and a memory store, in
// interleaved rounds, as a task without limits, with `concurrency` (a
// limit no run reaches, so nothing waits) and with `rateLimit` (a rate no
// drain reaches), and reports the time per task and each one's ratio to
// the plain task measured in the same run.  Without a limit a task must
// cost what it did (ratio ~1); with one, the store swaps it adds.
//
// Usage: node -C fedwork-source bench/task-limits.ts [--tasks N] [--rounds N]
import process from "node:process";
import { parseArgs } from "node:util";
import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";

const { values: args } = parseArgs({
  options: {
    tasks: { type: "string", default: "5000" },
    rounds: { type: "string", default: "5" },
  },
});
const TASKS = Number(args.tasks);
const ROUNDS = Number(args.rounds);

const schema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (value: unknown) => ({ value: value as { key: string; n: number } }),
  },
};

type Variant = "plain" | "concurrency" | "rateLimit";
const VARIANTS: readonly Variant[] = ["plain", "concurrency", "rateLimit"];

/** Drains TASKS tasks of one variant; returns milliseconds per task. */
async function drain(variant: Variant): Promise<number> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  let done = 0;
  let finish = () => {};
  const finished = new Promise<void>((resolve) => finish = resolve);
  const limits = variant === "concurrency"
    ? { concurrency: { key: (data: unknown) => (data as { key: string }).key, limit: 10_000 } }
    : variant === "rateLimit"
    ? { rateLimit: { limit: 1_000_000, period: { milliseconds: 1 } } }
    : {};
  const task = federation.defineTask("bench", {
    schema,
    ...limits,
    handler: () => {
      if (++done === TASKS) finish();
    },
  });
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  // Ten keys: each run takes and gives back a slot of its key.
  await ctx.enqueueTaskMany(
    task,
    Array.from({ length: TASKS }, (_, n) => ({ key: `k${n % 10}`, n })),
  );
  const controller = new AbortController();
  const started = performance.now();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  await finished;
  const elapsed = performance.now() - started;
  controller.abort();
  await workers;
  return elapsed / TASKS;
}

const results = new Map<Variant, number[]>(VARIANTS.map((variant) => [variant, []]));
await drain("plain"); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of VARIANTS) results.get(variant)!.push(await drain(variant));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const plain = median(results.get("plain")!);
console.log(`${TASKS} tasks x ${ROUNDS} rounds, in-process queue, MemoryKvStore (median)`);
for (const variant of VARIANTS) {
  const perTask = median(results.get(variant)!);
  console.log(
    `${variant.padEnd(12)} ${(perTask * 1000).toFixed(1).padStart(8)} µs/task  ` +
      `ratio ${(perTask / plain).toFixed(2)}`,
  );
}
process.exit(0);
