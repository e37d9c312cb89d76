// A plain typed task's cost, for before/after comparisons between commits
// (not a test): drains N tasks that use no flow control (no concurrency
// key, rate limit, debounce, throttle, pause or host policy) through a
// federation on an in-process queue and a memory store, and prints the
// median time per task over several rounds.  It uses only API that every
// 0.4 commit has, so the same file runs against an older checkout: run it
// in both and compare the medians (or time both processes paired).
//
// Usage: node -C fedwork-source bench/plain-task-drain.ts [--tasks N] [--rounds N]
import process from "node:process";
import { parseArgs } from "node:util";
import { createFederation, InProcessMessageQueue, MemoryKvStore } from "@fedwork/core";

const { values: args } = parseArgs({
  options: {
    tasks: { type: "string", default: "20000" },
    rounds: { type: "string", default: "5" },
  },
});
const TASKS = Number(args.tasks);
const ROUNDS = Number(args.rounds);

const schema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (value: unknown) => ({ value: value as { n: number } }),
  },
};

/** Drains TASKS plain tasks; returns microseconds per task. */
async function drain(): Promise<number> {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  let done = 0;
  let finish = () => {};
  const finished = new Promise<void>((resolve) => finish = resolve);
  const task = federation.defineTask("bench", {
    schema,
    handler: () => {
      if (++done === TASKS) finish();
    },
  });
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  await ctx.enqueueTaskMany(task, Array.from({ length: TASKS }, (_, n) => ({ n })));
  const controller = new AbortController();
  const started = performance.now();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  await finished;
  const elapsed = performance.now() - started;
  controller.abort();
  await workers;
  return elapsed * 1000 / TASKS;
}

await drain(); // warm-up
const rounds: number[] = [];
for (let round = 0; round < ROUNDS; round++) rounds.push(await drain());
rounds.sort((a, b) => a - b);
console.log(
  `${TASKS} plain tasks x ${ROUNDS} rounds, in-process queue, MemoryKvStore: ` +
    `median ${rounds[ROUNDS >> 1].toFixed(2)} µs/task (min ${rounds[0].toFixed(2)}, ` +
    `max ${rounds[ROUNDS - 1].toFixed(2)})`,
);
process.exit(0);
