// A quick local measurement of PostgresMessageQueue (not a test): pickup
// latency with an idle listener and drain throughput at concurrency 1 and 8.
//
// Usage: node_modules/.bin/node bench/postgres-queue.ts
import process from "node:process";
import postgres from "postgres";
import { PostgresMessageQueue } from "@fedwork/postgres";
import { percentile } from "./harness/stats.ts";

const url = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const table = `fedwork_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
const admin = postgres(url, { onnotice: () => {} });

async function pickup(count: number): Promise<number[]> {
  await using queue = new PostgresMessageQueue(url, { tableName: table });
  const controller = new AbortController();
  let resolveNext: ((at: number) => void) | undefined;
  const listening = queue.listen(() => resolveNext?.(performance.now()), {
    signal: controller.signal,
  });
  await queue.initialize();
  // Let the listener settle into its idle wait.
  await new Promise((r) => setTimeout(r, 300));
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const handled = new Promise<number>((r) => resolveNext = r);
    const start = performance.now();
    await queue.enqueue({ i });
    latencies.push((await handled) - start);
    await new Promise((r) => setTimeout(r, 5));
  }
  controller.abort();
  await listening;
  return latencies.sort((a, b) => a - b);
}

async function drain(count: number, concurrency: number): Promise<number> {
  await using queue = new PostgresMessageQueue(url, { tableName: table, concurrency });
  const messages = Array.from({ length: count }, (_, i) => ({ i }));
  for (let i = 0; i < count; i += 1000) await queue.enqueueMany(messages.slice(i, i + 1000));
  const controller = new AbortController();
  let handled = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => done = r);
  const start = performance.now();
  const listening = queue.listen(async () => {
    await Promise.resolve();
    if (++handled === count) done();
  }, { signal: controller.signal });
  await finished;
  const elapsed = performance.now() - start;
  controller.abort();
  await listening;
  return count / (elapsed / 1000);
}

try {
  const latencies = await pickup(200);
  const c1 = await drain(5000, 1);
  const c8 = await drain(5000, 8);
  console.log("| measurement                 | value        |");
  console.log("| --------------------------- | ------------ |");
  console.log(`| pickup p50 (200 msgs)       | ${percentile(latencies, 50).toFixed(2)} ms |`);
  console.log(`| pickup p99 (200 msgs)       | ${percentile(latencies, 99).toFixed(2)} ms |`);
  console.log(`| drain 5,000, concurrency 1  | ${c1.toFixed(0)} msg/s |`);
  console.log(`| drain 5,000, concurrency 8  | ${c8.toFixed(0)} msg/s |`);
} finally {
  await admin.unsafe(`DROP TABLE IF EXISTS "${table}"`);
  await admin.end({ timeout: 5 });
}
