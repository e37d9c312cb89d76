// Typed tasks on an InProcessMessageQueue against a bare loop doing the same
// work (not a test):
//   node_modules/.bin/node bench/in-process-drain.ts [tasks] [trials]
//   (or deno run -A / bun with the same arguments)
// "The same work" per task: encode the payload with Fedwork's codec when it
// is enqueued, then decode it, validate it against the schema and call the
// handler; the bare loop does exactly that over an array, with nothing else.
// Both time enqueueing all tasks plus draining them.  Trials alternate
// between the two; the ratio is Fedwork's time over the bare loop's, median
// of the per-trial ratios (1.0 means no overhead).  Then the pickup latency:
// one task at a time into an idle listener, from the enqueue call to the
// handler starting.
import {
  createFederation,
  decodeTaskPayload,
  encodeTaskPayload,
  InProcessMessageQueue,
  MemoryKvStore,
} from "@fedwork/core";
// The batch encoder enqueueTaskMany() uses (internal), so that both sides
// encode the same way.
import process from "node:process";

const deno = (globalThis as {
  Deno?: { args: string[]; version: { deno: string } };
}).Deno;
const args = deno != null ? deno.args : process.argv.slice(2);
const TASKS = Number(args[0] ?? 100_000);
const TRIALS = Number(args[1] ?? 5);
const PICKUPS = 2000;

// A Standard Schema by hand, so that the measurement is of Fedwork rather
// than of a schema library.
interface Payload {
  n: number;
  label: string;
}
const payloadSchema = {
  "~standard": {
    version: 1 as const,
    vendor: "bench",
    validate: (value: unknown) =>
      typeof value === "object" && value != null && typeof (value as Payload).n === "number"
        ? { value: value as Payload }
        : { issues: [{ message: "Expected a payload." }] },
    types: undefined as unknown as { input: Payload; output: Payload },
  },
};

const documentLoader = (url: string) => Promise.reject(new Error(`No documents: ${url}`));

let sink = 0;
function work(payload: Payload): void {
  sink += payload.n;
}

function payloads(): Payload[] {
  return Array.from({ length: TASKS }, (_, n) => ({ n, label: `task ${n}` }));
}

async function bareLoop(): Promise<number> {
  const items = payloads();
  const start = performance.now();
  const encoded = await Promise.all(items.map((item) => encodeTaskPayload(item)));
  const queue = encoded.map((data) => ({ taskName: "bench", data }));
  for (const message of queue) {
    const payload = await decodeTaskPayload(message.data, { documentLoader });
    const result = await payloadSchema["~standard"].validate(payload);
    if ("issues" in result) throw new Error("invalid");
    await work(result.value);
  }
  return performance.now() - start;
}

/** How long the last Fedwork trial spent enqueueing (the rest is draining). */
const enqueueShares: number[] = [];

async function fedwork(): Promise<number> {
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
  });
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  const task = federation.defineTask("bench", {
    schema: payloadSchema,
    handler(_ctx, payload) {
      work(payload);
      if (++done === TASKS) finish();
    },
  });
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  const items = payloads();
  const controller = new AbortController();
  const start = performance.now();
  await ctx.enqueueTaskMany(task, items);
  enqueueShares.push(performance.now() - start);
  const running = federation.startQueue(undefined, { signal: controller.signal });
  await finished;
  const elapsed = performance.now() - start;
  controller.abort();
  await running;
  await queue[Symbol.asyncDispose]();
  return elapsed;
}

async function pickup(): Promise<{ p50: number; p99: number }> {
  const queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
  });
  let onStart: (at: number) => void = () => {};
  const task = federation.defineTask("pickup", {
    schema: payloadSchema,
    handler() {
      onStart(performance.now());
    },
  });
  const ctx = federation.createContext(new URL("https://bench.example/"), undefined);
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  const samples: number[] = [];
  for (let i = 0; i < PICKUPS + 100; i++) {
    const started = new Promise<number>((resolve) => onStart = resolve);
    const at = performance.now();
    await ctx.enqueueTask(task, { n: i, label: "pickup" });
    const latency = (await started) - at;
    if (i >= 100) samples.push(latency);
    // Let the listener go back to waiting, as a trickle would.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  controller.abort();
  await running;
  samples.sort((a, b) => a - b);
  return {
    p50: samples[Math.floor(samples.length * 0.5)],
    p99: samples[Math.floor(samples.length * 0.99)],
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const runtime = deno != null
  ? `Deno ${deno.version.deno}`
  : "Bun" in globalThis
  ? `Bun ${(globalThis as unknown as { Bun: { version: string } }).Bun.version}`
  : `Node.js ${process.versions.node}`;
// Warm-up, not counted.
await bareLoop();
await fedwork();
const fedworkMs: number[] = [];
const bareMs: number[] = [];
const ratios: number[] = [];
for (let trial = 0; trial < TRIALS; trial++) {
  const first = trial % 2 === 0;
  const b1 = first ? await bareLoop() : 0;
  const f = await fedwork();
  const b = first ? b1 : await bareLoop();
  fedworkMs.push(f);
  bareMs.push(b);
  ratios.push(f / b);
}
const { p50, p99 } = await pickup();
console.log(`${runtime}, ${TASKS} typed tasks (enqueue + drain), median of ${TRIALS} trials`);
console.log(
  `Fedwork in-process: ${median(fedworkMs).toFixed(0)} ms ` +
    `(${Math.round(TASKS / median(fedworkMs) * 1000)} tasks/s)`,
);
console.log(`  of which enqueueTaskMany(): ${median(enqueueShares).toFixed(0)} ms`);
console.log(
  `bare loop:          ${median(bareMs).toFixed(0)} ms ` +
    `(${Math.round(TASKS / median(bareMs) * 1000)} tasks/s)`,
);
console.log(
  `ratio: ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${
    Math.max(...ratios).toFixed(2)
  })`,
);
console.log(`pickup p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms (${PICKUPS} tasks)`);
if (sink < 0) console.log(sink);
