// Where a typed task's time and memory go, by stage (not a test).  Drains
// typed tasks (a hand-written Standard Schema, a handler that only counts)
// through a federation at concurrency 1 and reports, per task:
//
// - CPU: process CPU time (user + system, GC included) over the drain;
// - promises: promises created during the drain (async_hooks), an upper
//   bound on the awaits a task costs, and deterministic;
// - allocations: bytes allocated (V8's sampling heap profiler, objects later
//   collected included), by stage;
// - CPU by stage: V8's CPU profiler, each sample charged to the innermost
//   frame in a file that belongs to a stage (claim/ack, decode, validate,
//   context, handler call, dispatch and outcome, records, events, logging),
//   so that a native call (JSON.parse, a SQLite step) counts for the stage
//   that made it; GC and the rest are shown apart.
//
// Each measure runs in its own drain (profilers and hooks slow the others
// down); the stage shares are what to compare between commits, the absolute
// numbers move with the machine's load.
//
// Usage: node --expose-gc -C fedwork-source bench/task-path.ts
//          [--queue in-process|sqlite] [--kv memory|sqlite] [--records on|off]
//          [--tasks N] [--trials N] [--many SIZE]
//
// `--many SIZE` defines the task with `handleMany: { size: SIZE }` (the
// handler counts its items), to see a batch handler's per-item cost.
import { createHook } from "node:async_hooks";
import { Session } from "node:inspector/promises";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { parseArgs } from "node:util";
import {
  createFederation,
  InProcessMessageQueue,
  MemoryKvStore,
  type MessageQueue,
} from "@fedwork/core";
import { SqliteKvStore, SqliteMessageQueue } from "@fedwork/sqlite";

const { values: args } = parseArgs({
  options: {
    queue: { type: "string", default: "in-process" },
    kv: { type: "string", default: "memory" },
    records: { type: "string", default: "on" },
    tasks: { type: "string", default: "20000" },
    trials: { type: "string", default: "3" },
    many: { type: "string" },
  },
});
const TASKS = Number(args.tasks);
const TRIALS = Number(args.trials);
const MANY = args.many == null ? undefined : Number(args.many);
if (args.queue !== "in-process" && args.queue !== "sqlite") {
  throw new TypeError("--queue must be in-process or sqlite.");
}
if (args.kv !== "memory" && args.kv !== "sqlite") {
  throw new TypeError("--kv must be memory or sqlite.");
}

// A Standard Schema by hand: the measurement is of Fedwork, not of a schema
// library.  Named so that the profile charges it to "validate".
const schema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: function benchValidate(value: unknown) {
      return typeof value === "object" && value != null
        ? { value: value as { n: number; text: string } }
        : { issues: [{ message: "Expected an object." }] };
    },
    types: undefined as unknown as {
      input: { n: number; text: string };
      output: { n: number; text: string };
    },
  },
};

/** The stages, each with the source paths (or function names) it owns. */
const STAGES: [stage: string, test: (url: string, fn: string) => boolean][] = [
  ["handler call", (_url, fn) => fn === "benchHandler"],
  ["validate", (url, fn) => fn === "benchValidate" || url.includes("/tasks/validation")],
  ["decode", (url) => url.includes("/tasks/codec/") || url.includes("/devalue/")],
  [
    "cancellation check",
    (url) => url.includes("/operator/cancellation/"),
  ],
  // The scheduler's timer lists the key-value store once a second; with a
  // MemoryKvStore that holds every status record, that walk is not per task.
  ["schedules (timer)", (url) => url.includes("/operator/schedules/")],
  [
    "records",
    (url) =>
      url.includes("/operator/records/") || url.includes("/operator/status/") ||
      url.includes("/federation/task-status") ||
      url.includes("/kv/"),
  ],
  [
    "events, metrics, observers",
    (url) =>
      url.includes("/processing/events") || url.includes("/processing/metrics") ||
      url.includes("/processing/throughput") || url.includes("/operator/"),
  ],
  ["logging", (url) => url.includes("/@logtape/")],
  [
    "context",
    (url) => url.includes("/federation/task-context") || url.includes("/federation/context"),
  ],
  ["time limit", (url) => url.includes("/processing/time-limit")],
  ["tracing", (url) => url.includes("/processing/tracing") || url.includes("/@opentelemetry/")],
  [
    "task run (tasks/handler: run info, hooks, result)",
    (url) => url.includes("/tasks/handler") || url.includes("/tasks/result"),
  ],
  ["dispatch, outcome (processing/)", (url) => url.includes("/processing/")],
  ["claim, ack (queue)", (url) => url.includes("/core/src/queue/") || url.includes("/sqlite/")],
  ["federation wiring (workers, hooks)", (url) => url.includes("/federation/")],
  ["bench driver", (url) => url.endsWith("/bench/task-path.ts")],
];

function stageOf(url: string, fn: string): string | undefined {
  for (const [stage, test] of STAGES) if (test(url, fn)) return stage;
  return undefined;
}

function makeQueue(): { queue: MessageQueue; close(): Promise<void> } {
  if (args.queue === "in-process") {
    return { queue: new InProcessMessageQueue(), close: () => Promise.resolve() };
  }
  const path = join(tmpdir(), `fedwork-task-path-${crypto.randomUUID()}.sqlite`);
  const queue = new SqliteMessageQueue({ path, concurrency: 1 });
  return {
    queue,
    async close() {
      await queue[Symbol.asyncDispose]();
      await Promise.all(["", "-wal", "-shm"].map((s) => rm(path + s, { force: true })));
    },
  };
}

/**
 * Enqueues `count` tasks (untimed), then drains them with `measure` wrapped
 * around the drain.
 */
async function drain<T>(
  count: number,
  measure: (drained: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const { queue, close } = makeQueue();
  const kvPath = join(tmpdir(), `fedwork-task-path-kv-${crypto.randomUUID()}.sqlite`);
  const kv = args.kv === "sqlite" ? new SqliteKvStore({ path: kvPath }) : new MemoryKvStore();
  const federation = createFederation<void>({
    kv,
    queue: { task: queue },
    manuallyStartQueue: true,
    ...(args.records === "off" ? { taskStatusRetention: 0 as const } : {}),
  });
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  const task = MANY == null
    ? federation.defineTask("bench", {
      schema,
      handler: function benchHandler() {
        if (++done === count) finish();
      },
    })
    : federation.defineTask("bench", {
      schema,
      handleMany: { size: MANY },
      handler: function benchHandler(_ctx, items) {
        done += items.length;
        if (done === count) finish();
      },
    });
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  for (let i = 0; i < count; i += 1000) {
    const payloads = Array.from(
      { length: Math.min(1000, count - i) },
      (_, j) => ({ n: i + j, text: "hello" }),
    );
    await ctx.enqueueTaskMany(task, payloads);
  }
  // Settle the enqueue's background work (record writes) before measuring.
  await new Promise((resolve) => setTimeout(resolve, 50));
  (globalThis as { gc?: () => void }).gc?.();
  const controller = new AbortController();
  let running: Promise<void> | undefined;
  const result = await measure(() => {
    running = federation.startQueue(undefined, { signal: controller.signal });
    return finished;
  });
  controller.abort();
  await running;
  await close();
  if (kv instanceof SqliteKvStore) {
    await kv[Symbol.asyncDispose]();
    await Promise.all(["", "-wal", "-shm"].map((s) => rm(kvPath + s, { force: true })));
  }
  return result;
}

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string };
  hitCount?: number;
  children?: number[];
  selfSize?: number;
}

/** Charges each node's own cost to its innermost ancestor with a stage. */
function byStage(
  nodes: readonly ProfileNode[],
  cost: (node: ProfileNode) => number,
): Map<string, number> {
  const parent = new Map<number, ProfileNode>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node);
  const totals = new Map<string, number>();
  for (const node of nodes) {
    const amount = cost(node);
    if (amount === 0) continue;
    let stage: string | undefined;
    const name = node.callFrame.functionName;
    if (name === "(garbage collector)") stage = "garbage collection";
    else if (name === "(idle)") stage = "(idle)";
    for (let at: ProfileNode | undefined = node; stage == null && at != null;) {
      stage = stageOf(at.callFrame.url, at.callFrame.functionName);
      at = parent.get(at.id);
    }
    stage ??= "other (runtime, unattributed)";
    totals.set(stage, (totals.get(stage) ?? 0) + amount);
  }
  return totals;
}

function flattenHeap(head: ProfileNode & { children?: unknown }): ProfileNode[] {
  const out: ProfileNode[] = [];
  let next = 1;
  const walk = (node: ProfileNode & { children?: unknown[] }): number => {
    const id = next++;
    const children = ((node.children ?? []) as (ProfileNode & { children?: unknown[] })[])
      .map(walk);
    out.push({ id, callFrame: node.callFrame, selfSize: node.selfSize, children });
    return id;
  };
  walk(head as ProfileNode & { children?: unknown[] });
  return out;
}

/** With TASK_PATH_TOP set: the 25 costliest functions (self cost), to refine the stages. */
function printTop(
  nodes: readonly ProfileNode[],
  cost: (node: ProfileNode) => number,
  unit: string,
  scale = 1,
) {
  const totals = new Map<string, number>();
  const parent = new Map<number, ProfileNode>();
  for (const node of nodes) for (const child of node.children ?? []) parent.set(child, node);
  const name = (node: ProfileNode | undefined) =>
    node == null
      ? ""
      : `${node.callFrame.functionName || "(anonymous)"} ${
        node.callFrame.url.replace(/^.*\/(packages|node_modules)\//, "")
      }`;
  for (const node of nodes) {
    let key = name(node);
    // TASK_PATH_TOP=3 shows three callers too.
    let at = parent.get(node.id);
    for (let i = 1; i < Number(process.env.TASK_PATH_TOP) && at != null; i++) {
      key += ` < ${name(at)}`;
      at = parent.get(at.id);
    }
    totals.set(key, (totals.get(key) ?? 0) + cost(node));
  }
  const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.error(`top functions by ${unit}:`);
  for (const [key, value] of top) console.error(`  ${(value * scale / TASKS).toFixed(2)} ${key}`);
}

const median = (values: number[]) => values.toSorted((a, b) => a - b)[values.length >> 1];
const range = (values: number[], digits: number) =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${
    Math.max(...values).toFixed(digits)
  })`;

const session = new Session();
session.connect();
await drain(2_000, (drained) => drained()); // Warm-up: JIT, first-use setup.

const cpu: number[] = [];
const wall: number[] = [];
const promises: number[] = [];
const bytes: number[] = [];
const cpuStages = new Map<string, number[]>();
const heapStages = new Map<string, number[]>();
for (let trial = 0; trial < TRIALS; trial++) {
  // CPU and wall time, nothing attached.
  await drain(TASKS, async (drained) => {
    const start = process.cpuUsage();
    const t0 = performance.now();
    await drained();
    wall.push((performance.now() - t0) * 1000 / TASKS);
    const used = process.cpuUsage(start);
    cpu.push((used.user + used.system) / TASKS);
  });
  // Promises created.
  await drain(TASKS, async (drained) => {
    let count = 0;
    const hook = createHook({
      init(_id, type) {
        if (type === "PROMISE") count++;
      },
    });
    hook.enable();
    await drained();
    hook.disable();
    promises.push(count / TASKS);
  });
  // CPU by stage.
  await drain(TASKS, async (drained) => {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 50 });
    await session.post("Profiler.start");
    await drained();
    const { profile } = await session.post("Profiler.stop");
    await session.post("Profiler.disable");
    const nodes = profile.nodes as unknown as ProfileNode[];
    if (process.env.TASK_PATH_TOP) {
      printTop(
        nodes,
        (node) => node.hitCount ?? 0,
        "µs (samples × 50 µs)",
        50,
      );
    }
    const totals = byStage(nodes, (node) => node.hitCount ?? 0);
    totals.delete("(idle)");
    const all = [...totals.values()].reduce((a, b) => a + b, 0);
    for (const [stage, hits] of totals) {
      const list = cpuStages.get(stage) ?? [];
      list.push(hits / all);
      cpuStages.set(stage, list);
    }
  });
  // Allocations by stage.
  await drain(TASKS, async (drained) => {
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 128,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    await drained();
    const { profile } = await session.post("HeapProfiler.stopSampling");
    await session.post("HeapProfiler.disable");
    const nodes = flattenHeap(profile.head as unknown as ProfileNode);
    if (process.env.TASK_PATH_TOP) printTop(nodes, (node) => node.selfSize ?? 0, "bytes");
    const totals = byStage(nodes, (node) => node.selfSize ?? 0);
    const all = [...totals.values()].reduce((a, b) => a + b, 0);
    bytes.push(all / TASKS);
    for (const [stage, size] of totals) {
      const list = heapStages.get(stage) ?? [];
      list.push(size / TASKS);
      heapStages.set(stage, list);
    }
  });
}
session.disconnect();

console.log(
  `Typed tasks, ${args.queue} queue, concurrency 1, records ${args.records}, ` +
    `${TASKS.toLocaleString("en")} tasks × ${TRIALS} trials, Node.js ${process.versions.node}; ` +
    "median (min–max)\n",
);
console.log(`| per task | value |\n| --- | --- |`);
console.log(`| CPU time | ${range(cpu, 2)} µs |`);
console.log(`| wall time | ${range(wall, 2)} µs |`);
console.log(`| promises created | ${range(promises, 1)} |`);
console.log(`| bytes allocated | ${range(bytes, 0)} B |\n`);
const stages = [...new Set([...cpuStages.keys(), ...heapStages.keys()])].sort((a, b) =>
  median(cpuStages.get(b) ?? [0]) - median(cpuStages.get(a) ?? [0])
);
console.log("| stage | share of CPU | CPU per task | bytes allocated per task |");
console.log("| --- | --- | --- | --- |");
for (const stage of stages) {
  const share = cpuStages.get(stage) ?? [0];
  const perTask = share.map((s) => s * median(cpu));
  console.log(
    `| ${stage} | ${(median(share) * 100).toFixed(1)}% | ${median(perTask).toFixed(2)} µs | ${
      median(heapStages.get(stage) ?? [0]).toFixed(0)
    } B |`,
  );
}
process.exit(0);
