// A quick local measurement of RedisMessageQueue (not a test):
//   node_modules/.bin/node bench/redis-queue.ts
// Pickup latency: enqueue -> handler start for sequential messages with an
// idle listener.  Drain: enqueueMany N messages, then time a listener with
// concurrency 1 and 8 until all are handled.  Uses REDIS_URL (default
// redis://127.0.0.1:6379) and deletes its keys afterwards.
import process from "node:process";
import { deleteKeys } from "../packages/redis/src/testdata/conformance-factory.ts";
import { RedisMessageQueue } from "@fedwork/redis";
import { percentile } from "./harness/stats.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PICKUP_MESSAGES = 200;
const DRAIN_MESSAGES = 5_000;
const ENQUEUE_CHUNK = 1_000;

async function measurePickup(queueName: string): Promise<number[]> {
  await using queue = new RedisMessageQueue({ url: REDIS_URL, queue: queueName });
  const controller = new AbortController();
  let arrived: ((at: number) => void) | undefined;
  const listening = queue.listen(() => arrived?.(performance.now()), {
    signal: controller.signal,
  });
  // Warm up connections and script caches.
  for (let i = 0; i < 10; i++) {
    const got = new Promise<number>((resolve) => arrived = resolve);
    await queue.enqueue({ warmup: i });
    await got;
  }
  const latencies: number[] = [];
  for (let i = 0; i < PICKUP_MESSAGES; i++) {
    // Let the listener go idle (blocked waiting for a wake-up) first.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const got = new Promise<number>((resolve) => arrived = resolve);
    const start = performance.now();
    await queue.enqueue({ i });
    latencies.push((await got) - start);
  }
  controller.abort();
  await listening;
  return latencies.sort((a, b) => a - b);
}

async function measureDrain(queueName: string, concurrency: number): Promise<number> {
  await using producer = new RedisMessageQueue({ url: REDIS_URL, queue: queueName });
  const messages = Array.from({ length: DRAIN_MESSAGES }, (_, i) => ({ i, body: "x".repeat(64) }));
  for (let i = 0; i < messages.length; i += ENQUEUE_CHUNK) {
    await producer.enqueueMany(messages.slice(i, i + ENQUEUE_CHUNK));
  }
  await using consumer = new RedisMessageQueue({ url: REDIS_URL, queue: queueName, concurrency });
  const controller = new AbortController();
  let handled = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => done = resolve);
  const start = performance.now();
  const listening = consumer.listen(() => {
    if (++handled === DRAIN_MESSAGES) done();
  }, { signal: controller.signal });
  await all;
  const seconds = (performance.now() - start) / 1000;
  controller.abort();
  await listening;
  return DRAIN_MESSAGES / seconds;
}

const runId = crypto.randomUUID().slice(0, 8);
const names = [`bench-pickup-${runId}`, `bench-drain1-${runId}`, `bench-drain8-${runId}`];
try {
  const latencies = await measurePickup(names[0]);
  const drain1 = await measureDrain(names[1], 1);
  const drain8 = await measureDrain(names[2], 8);
  const rows = [
    ["pickup p50", `${percentile(latencies, 50).toFixed(2)} ms`],
    ["pickup p99", `${percentile(latencies, 99).toFixed(2)} ms`],
    ["drain, concurrency 1", `${Math.round(drain1)} msg/s`],
    ["drain, concurrency 8", `${Math.round(drain8)} msg/s`],
  ];
  process.stdout.write(`RedisMessageQueue (${process.release.name} ${process.version})\n`);
  for (const [label, value] of rows) {
    process.stdout.write(`${label.padEnd(24)}${value.padStart(14)}\n`);
  }
} finally {
  for (const name of names) await deleteKeys(`{fedwork:${name}}`);
}
