// Where a PostgreSQL pickup's time goes, hop by hop: an idle
// PostgresMessageQueue listener at concurrency 1 gets messages enqueued one
// at a time at 100 per second, and a second connection LISTENs on the same
// channel, so that each message's time splits into enqueue -> notification
// (the commit, its fsync and the NOTIFY) and notification -> handler (what
// the listener does: the claim, and whatever it waits for before starting
// the handler).  The second part is the queue's own; the first is the
// server's and the same for every system.
//
//   node -C fedwork-source bench/postgres-pickup-hops.ts [--messages N] [--trials N]
//
// Each trial runs in this process, one after the other, after an uncounted
// drain of 5,000 messages; prints per trial and the medians over trials.
// Uses the schema bench_pickup_hops (dropped before each trial).
import { PostgresMessageQueue } from "@fedwork/postgres";
import process from "node:process";
import postgres from "postgres";

const POSTGRES_URL = process.env.POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const SCHEMA = "bench_pickup_hops";
const WARMUP_DRAIN = 5_000;
const RATE = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Trial {
  pickupP50: number;
  pickupP99: number;
  notifyP50: number;
  notifyP99: number;
  handlerP50: number;
  handlerP99: number;
}

async function trial(messages: number): Promise<Trial> {
  const admin = postgres(POSTGRES_URL, { onnotice: () => {}, max: 1 });
  await admin.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.unsafe(`CREATE SCHEMA "${SCHEMA}"`);
  const producer = new PostgresMessageQueue(POSTGRES_URL, { schema: SCHEMA, tableName: "hops" });
  const consumer = new PostgresMessageQueue(POSTGRES_URL, {
    schema: SCHEMA,
    tableName: "hops",
    concurrency: 1,
  });
  await producer.initialize();
  const sentAt: number[] = [];
  const notifiedAt: number[] = [];
  const startedAt: number[] = [];
  let counting = false;
  let drained = 0;
  let drainDone!: () => void;
  const drainFinished = new Promise<void>((resolve) => drainDone = resolve);
  const controller = new AbortController();
  const listening = consumer.listen((message: { i: number }) => {
    if (message.i < 0) {
      if (++drained === WARMUP_DRAIN) drainDone();
      return;
    }
    startedAt[message.i] = performance.now();
  }, { signal: controller.signal });
  // Only enqueues notify on this channel here (no keyed rows, no
  // failures), so the nth notification belongs to the nth enqueue.
  const listener = postgres(POSTGRES_URL, { onnotice: () => {}, max: 1 });
  let notifications = 0;
  await listener.listen(`${SCHEMA}_hops`, () => {
    if (counting) notifiedAt[notifications++] = performance.now();
  });
  try {
    const warm = Array.from({ length: WARMUP_DRAIN }, () => ({ i: -1 }));
    for (let i = 0; i < warm.length; i += 500) await producer.enqueueMany(warm.slice(i, i + 500));
    await drainFinished;
    await sleep(200);
    counting = true;
    const start = performance.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < messages; i++) {
      const wait = start + (i * 1000) / RATE - performance.now();
      if (wait > 0) await sleep(wait);
      sentAt[i] = performance.now();
      sends.push(producer.enqueue({ i }));
    }
    await Promise.all(sends);
    while (startedAt.filter((t) => t != null).length < messages) await sleep(5);
  } finally {
    controller.abort();
    await listening;
    await listener.end({ timeout: 5 });
    await producer[Symbol.asyncDispose]();
    await consumer[Symbol.asyncDispose]();
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await admin.end({ timeout: 5 });
  }
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return [percentile(sorted, 50), percentile(sorted, 99)];
  };
  const ids = Array.from({ length: messages }, (_, i) => i);
  const [pickupP50, pickupP99] = stats(ids.map((i) => startedAt[i] - sentAt[i]));
  const [notifyP50, notifyP99] = stats(ids.map((i) => notifiedAt[i] - sentAt[i]));
  const [handlerP50, handlerP99] = stats(ids.map((i) => startedAt[i] - notifiedAt[i]));
  return { pickupP50, pickupP99, notifyP50, notifyP99, handlerP50, handlerP99 };
}

let messages = 300;
let trials = 3;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
  if (args[i] === "--messages") messages = Number(args[i + 1]);
  else if (args[i] === "--trials") trials = Number(args[i + 1]);
  else throw new Error(`unknown argument ${args[i]}`);
}
const results: Trial[] = [];
const f = (n: number) => n.toFixed(3);
for (let t = 0; t < trials; t++) {
  const r = await trial(messages);
  results.push(r);
  console.log(
    `trial ${t + 1}: enqueue->handler p50 ${f(r.pickupP50)} p99 ${f(r.pickupP99)} ms; ` +
      `enqueue->notification p50 ${f(r.notifyP50)} p99 ${f(r.notifyP99)}; ` +
      `notification->handler p50 ${f(r.handlerP50)} p99 ${f(r.handlerP99)}`,
  );
}
const m = (key: keyof Trial) => f(median(results.map((r) => r[key])));
console.log(
  `medians of ${trials}: enqueue->handler p50 ${m("pickupP50")} p99 ${m("pickupP99")} ms; ` +
    `enqueue->notification p50 ${m("notifyP50")} p99 ${m("notifyP99")}; ` +
    `notification->handler p50 ${m("handlerP50")} p99 ${m("handlerP99")}`,
);
process.exit(0);
