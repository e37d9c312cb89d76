// A local measurement of the dashboard's throughput counters (not a test):
//
// - observe: what counting one lifecycle event costs a worker, next to a
//   baseline of an empty observer call, medians of interleaved rounds;
// - read: getThroughput()'s read of an hour of counters written by 8
//   workers (480 keys) from a MemoryKvStore, listing and summing.
//
// Usage: node_modules/.bin/node -C fedwork-source bench/throughput.ts
//        (or deno run -A / bun --conditions=fedwork-source)
import { MemoryKvStore } from "@fedwork/core";
// The recorder has no public handle: the federation creates it for the
// dashboard.  Measured through the public API, one event's cost would be
// lost in the whole dispatcher's, so this bench reaches into core by path.
import { ThroughputRecorder } from "../packages/core/src/processing/throughput.ts";
import type { MessageEvent } from "../packages/core/src/processing/events.ts";

const EVENTS = 200_000;
const ROUNDS = 7;
const event: MessageEvent = {
  type: "completed",
  messageId: "00000000-0000-0000-0000-000000000000",
  kind: "task",
  taskName: "bench",
  attempt: 0,
  enqueuedAt: new Date(),
  duration: 1,
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const kv = new MemoryKvStore();
// A flush interval longer than the run: only counting is measured.
const recorder = new ThroughputRecorder(kv, { flushIntervalMs: 3_600_000 });
let sink = 0;
const empty = (e: MessageEvent) => {
  sink += e.attempt;
};
const attempt = { outcome: { type: event.type } } as const;
const observed: number[] = [];
const baseline: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  let start = performance.now();
  for (let i = 0; i < EVENTS; i++) recorder.observe(attempt);
  observed.push((performance.now() - start) / EVENTS * 1e6);
  start = performance.now();
  for (let i = 0; i < EVENTS; i++) empty(event);
  baseline.push((performance.now() - start) / EVENTS * 1e6);
}
await recorder.flush();

const minute = Math.floor(Date.now() / 60_000);
for (let worker = 0; worker < 8; worker++) {
  for (let m = 0; m < 60; m++) {
    await kv.set(["fedwork", "throughput", String(minute - m), `worker-${worker}`], {
      completed: 10,
      failed: 1,
      retried: 2,
      dropped: 0,
    });
  }
}
const reader = new ThroughputRecorder(kv);
const reads: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const start = performance.now();
  await reader.read({ minutes: 60 });
  reads.push(performance.now() - start);
}
console.log(
  `observe: ${median(observed).toFixed(1)} ns per event ` +
    `(empty observer: ${median(baseline).toFixed(1)} ns)`,
);
console.log(
  `read 60 minutes × 8 workers (480 keys, MemoryKvStore): ${median(reads).toFixed(2)} ms`,
);
if (sink < 0) console.log(sink);
