// AmqpMessageQueue against a bare amqplib consumer, at the same prefetch
// (not a test):
//   node -C fedwork-source bench/amqp-prefetch.ts [messages] [trials]
// For each concurrency (1 and 10) and prefetch, both drain the same number of
// pre-published messages; each handler does the same trivial work (parse the
// JSON body, add a number) and each message is acknowledged on its own.  The
// bare consumer limits itself to `concurrency` running handlers, as a
// hand-written amqplib worker would.  Systems alternate trial by trial, each
// on a fresh queue; the ratio is Fedwork's drain rate over amqplib's, median
// of the per-trial ratios (> 1 means Fedwork is faster).  The last column
// is this process's CPU time per message (user + system), the client's own
// cost, which a busy machine disturbs less than the rates.  Uses AMQP_URL;
// ONLY=<concurrency>/<prefetch> runs one case.
import { AmqpMessageQueue } from "@fedwork/amqp";
import { connect, type ConsumeMessage } from "amqplib";
import process from "node:process";

const url = process.env.AMQP_URL ?? "amqp://guest:guest@127.0.0.1:5672";
const MESSAGES = Number(process.argv[2] ?? 5000);
const TRIALS = Number(process.argv[3] ?? 3);
const CASES: [concurrency: number, prefetches: number[]][] = [
  [1, [1, 4, 16, 32, 64]],
  [10, [10, 20, 40, 100]],
];

let sink = 0;
function work(message: { i: number }): void {
  sink += message.i;
}

function newQueueName(): string {
  return `fedwork-bench-${crypto.randomUUID().slice(0, 8)}`;
}

/** Publishes the messages with Fedwork's publisher (not timed). */
async function fill(name: string): Promise<void> {
  await using queue = new AmqpMessageQueue({ url, queue: name });
  await queue.enqueueMany(Array.from({ length: MESSAGES }, (_, i) => ({ i })));
}

async function cleanUp(name: string): Promise<void> {
  await using queue = new AmqpMessageQueue({ url, queue: name });
  await queue.deleteQueues();
}

/** Messages per second, and this process's CPU time per message in µs. */
interface Drain {
  rate: number;
  cpu: number;
}

async function drainFedwork(concurrency: number, prefetch: number): Promise<Drain> {
  const name = newQueueName();
  await fill(name);
  const queue = new AmqpMessageQueue({ url, queue: name, concurrency, prefetch });
  const controller = new AbortController();
  let handled = 0;
  let finish!: () => void;
  const all = new Promise<void>((resolve) => finish = resolve);
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const listening = queue.listen((message) => {
    work(message);
    if (++handled === MESSAGES) finish();
  }, { signal: controller.signal });
  await all;
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuPerMessage(cpuStart);
  controller.abort();
  await listening;
  await queue[Symbol.asyncDispose]();
  await cleanUp(name);
  return { rate: MESSAGES / seconds, cpu };
}

async function drainAmqplib(concurrency: number, prefetch: number): Promise<Drain> {
  const name = newQueueName();
  await fill(name);
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const model = await connect(url);
  const channel = await model.createChannel();
  await channel.assertQueue(name, { durable: true });
  await channel.prefetch(prefetch);
  let handled = 0;
  let finish!: () => void;
  const all = new Promise<void>((resolve) => finish = resolve);
  let running = 0;
  const waiting: ConsumeMessage[] = [];
  const run = async (delivery: ConsumeMessage) => {
    running++;
    try {
      await Promise.resolve(work(JSON.parse(delivery.content.toString("utf8"))));
      channel.ack(delivery);
    } finally {
      running--;
    }
    if (++handled === MESSAGES) finish();
    const next = waiting.shift();
    if (next != null) void run(next);
  };
  await channel.consume(name, (delivery) => {
    if (delivery == null) return;
    if (running < concurrency) void run(delivery);
    else waiting.push(delivery);
  }, { noAck: false });
  await all;
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuPerMessage(cpuStart);
  await model.close();
  await cleanUp(name);
  return { rate: MESSAGES / seconds, cpu };
}

function cpuPerMessage(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / MESSAGES;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

// Warm both paths up (connections, JIT) before measuring.
await drainFedwork(1, 1);
await drainAmqplib(1, 1);

console.log(
  `AmqpMessageQueue vs amqplib ${
    process.versions.node ? `on Node.js ${process.versions.node}` : ""
  }, ` +
    `${MESSAGES} messages, median of ${TRIALS} alternating trials`,
);
console.log(
  "| concurrency | prefetch | Fedwork msg/s | amqplib msg/s | ratio (spread) " +
    "| client CPU µs/msg Fedwork / amqplib |",
);
console.log(
  "| ----------: | -------: | ------------: | ------------: | -------------- " +
    "| ----------------------------------- |",
);
const only = process.env.ONLY;
for (const [concurrency, prefetches] of CASES) {
  for (const prefetch of prefetches) {
    if (only != null && only !== `${concurrency}/${prefetch}`) continue;
    const fedwork: number[] = [];
    const raw: number[] = [];
    const ratios: number[] = [];
    const fedworkCpu: number[] = [];
    const rawCpu: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      // Alternate which one goes first, so that neither always runs warm.
      let f: Drain, r: Drain;
      if (trial % 2 === 0) {
        f = await drainFedwork(concurrency, prefetch);
        r = await drainAmqplib(concurrency, prefetch);
      } else {
        r = await drainAmqplib(concurrency, prefetch);
        f = await drainFedwork(concurrency, prefetch);
      }
      fedwork.push(f.rate);
      raw.push(r.rate);
      ratios.push(f.rate / r.rate);
      fedworkCpu.push(f.cpu);
      rawCpu.push(r.cpu);
    }
    const spread = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
    console.log(
      `| ${String(concurrency).padStart(11)} | ${String(prefetch).padStart(8)} | ${
        Math.round(median(fedwork)).toString().padStart(13)
      } | ${Math.round(median(raw)).toString().padStart(13)} | ${
        median(ratios).toFixed(2)
      }× (${spread}) | ${median(fedworkCpu).toFixed(1)} / ${median(rawCpu).toFixed(1)} |`,
    );
  }
}
if (sink < 0) console.log(sink);
