// A quick local measurement of AmqpMessageQueue (not a test):
//   node_modules/.bin/node bench/amqp-queue.ts
// Pickup latency: enqueue -> handler start, over sequential messages with an
// idle listener.  Drain: enqueueMany() N messages, then time a listener with
// concurrency 1 and 8 until all are handled.  Uses AMQP_URL.
import { AmqpMessageQueue } from "@fedwork/amqp";
import process from "node:process";
import { percentile } from "./harness/stats.ts";

const url = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const PICKUPS = 200;
const DRAIN = 5000;

function newQueueName(): string {
  return `fedwork-bench-${crypto.randomUUID().slice(0, 8)}`;
}

async function measurePickup(): Promise<{ p50: number; p99: number }> {
  const queue = new AmqpMessageQueue({ url, queue: newQueueName() });
  const controller = new AbortController();
  let onHandled: (at: number) => void = () => {};
  const listening = queue.listen(() => onHandled(performance.now()), {
    signal: controller.signal,
  });
  await queue.enqueue("warm-up-publisher");
  const samples: number[] = [];
  for (let i = 0; i < PICKUPS + 10; i++) {
    const handled = new Promise<number>((resolve) => onHandled = resolve);
    const start = performance.now();
    await queue.enqueue({ i });
    const at = await handled;
    // The first few include the listener's connection setup.
    if (i >= 10) samples.push(at - start);
  }
  controller.abort();
  await listening;
  await queue.deleteQueues();
  await queue[Symbol.asyncDispose]();
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

async function measureDrain(concurrency: number, prefetch = concurrency): Promise<number> {
  const queue = new AmqpMessageQueue({ url, queue: newQueueName(), concurrency, prefetch });
  await queue.enqueueMany(Array.from({ length: DRAIN }, (_, i) => ({ i })));
  const controller = new AbortController();
  let handled = 0;
  let finish!: () => void;
  const all = new Promise<void>((resolve) => finish = resolve);
  const start = performance.now();
  const listening = queue.listen(() => {
    if (++handled === DRAIN) finish();
  }, { signal: controller.signal });
  await all;
  const seconds = (performance.now() - start) / 1000;
  controller.abort();
  await listening;
  await queue.deleteQueues();
  await queue[Symbol.asyncDispose]();
  return DRAIN / seconds;
}

const pickup = await measurePickup();
const rows: [string, string][] = [
  [`pickup p50 (${PICKUPS} sequential)`, `${pickup.p50.toFixed(2)} ms`],
  ["pickup p99", `${pickup.p99.toFixed(2)} ms`],
];
for (const [concurrency, prefetch] of [[1, 1], [8, 8], [1, 16], [8, 64]]) {
  const rate = await measureDrain(concurrency, prefetch);
  rows.push([
    `drain ${DRAIN}, concurrency ${concurrency}, prefetch ${prefetch}`,
    `${rate.toFixed(0)} msg/s`,
  ]);
}
console.log(`AmqpMessageQueue on ${url.replace(/:[^:@/]*@/, ":***@")}`);
console.log(`| ${"measurement".padEnd(40)} | ${"value".padStart(12)} |`);
console.log(`|${"-".repeat(42)}|${"-".repeat(14)}|`);
for (const [label, value] of rows) console.log(`| ${label.padEnd(40)} | ${value.padStart(12)} |`);
