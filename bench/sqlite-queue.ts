// A quick local measurement of SqliteMessageQueue (not a test): pickup
// latency (enqueue → handler start, same process, idle listener) and drain
// throughput at concurrency 1 and 8.
//
// Usage: node_modules/.bin/node bench/sqlite-queue.ts   (or deno run -A / bun)
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteMessageQueue } from "@fedwork/sqlite";
import { percentile } from "./harness/stats.ts";

const PICKUP_MESSAGES = 200;
const DRAIN_MESSAGES = 5_000;

async function withFile<T>(body: (path: string) => Promise<T>): Promise<T> {
  const path = join(tmpdir(), `fedwork-bench-${crypto.randomUUID()}.sqlite`);
  try {
    return await body(path);
  } finally {
    await Promise.all(["", "-wal", "-shm"].map((s) => rm(path + s, { force: true })));
  }
}

async function measurePickup(): Promise<{ p50: number; p99: number }> {
  return await withFile(async (path) => {
    await using queue = new SqliteMessageQueue({ path });
    const controller = new AbortController();
    let onMessage: (() => void) | undefined;
    const listening = queue.listen(() => onMessage?.(), { signal: controller.signal });
    await queue.getDepth();
    const latencies: number[] = [];
    for (let i = 0; i < PICKUP_MESSAGES; i++) {
      const handled = new Promise<number>((
        resolve,
      ) => (onMessage = () => resolve(performance.now())));
      const start = performance.now();
      await queue.enqueue({ i });
      latencies.push((await handled) - start);
    }
    controller.abort();
    await listening;
    latencies.sort((a, b) => a - b);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
  });
}

async function measureDrain(concurrency: number): Promise<number> {
  return await withFile(async (path) => {
    await using queue = new SqliteMessageQueue({ path, concurrency });
    await queue.enqueueMany(Array.from({ length: DRAIN_MESSAGES }, (_, i) => ({ i })));
    const controller = new AbortController();
    let handled = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const start = performance.now();
    const listening = queue.listen(async () => {
      await Promise.resolve();
      if (++handled === DRAIN_MESSAGES) done();
    }, { signal: controller.signal });
    await finished;
    const seconds = (performance.now() - start) / 1000;
    controller.abort();
    await listening;
    return DRAIN_MESSAGES / seconds;
  });
}

const pickup = await measurePickup();
const drain1 = await measureDrain(1);
const drain8 = await measureDrain(8);
const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const rows: [string, string][] = [
  [`pickup p50 (${PICKUP_MESSAGES} sequential, same process)`, `${pickup.p50.toFixed(2)} ms`],
  ["pickup p99", `${pickup.p99.toFixed(2)} ms`],
  [`drain ${DRAIN_MESSAGES}, concurrency 1`, `${drain1.toFixed(0)} msg/s`],
  [`drain ${DRAIN_MESSAGES}, concurrency 8`, `${drain8.toFixed(0)} msg/s`],
];
const width = Math.max(...rows.map(([label]) => label.length));
console.log(`SqliteMessageQueue on ${runtime}`);
console.log(`| ${"measurement".padEnd(width)} | value        |`);
console.log(`| ${"-".repeat(width)} | ------------ |`);
for (const [label, value] of rows) console.log(`| ${label.padEnd(width)} | ${value.padEnd(12)} |`);
