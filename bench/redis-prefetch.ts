// A quick local measurement of RedisMessageQueue's prefetch (not a test):
//   node -C fedwork-source bench/redis-prefetch.ts [--prefetch 0,4,16,64]
//        [--concurrency 1,10] [--messages 5000] [--trials 3] [--handler-ms 0]
// For every concurrency and prefetch: drains N already-enqueued messages
// with one listener and prints messages per second (median of the trials)
// and how many Redis commands the listener ran per message.  --handler-ms
// makes each handler wait that long (a timer), as slow handlers do.
//
// Commands are counted with INFO commandstats on a private redis-server
// started on a free port for the run (commands run inside Lua scripts are
// counted one by one there), so other users of the shared server do not
// disturb the count.  The drain is timed against the same private server.
// Set REDIS_SERVER to another redis-server binary if it is not on PATH.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import process from "node:process";
import { Redis } from "ioredis";
import { RedisMessageQueue } from "@fedwork/redis";

function listArgument(name: string, fallback: number[]): number[] {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  return process.argv[index + 1].split(",").map(Number);
}

const PREFETCH = listArgument("prefetch", [0, 4, 16, 64]);
const CONCURRENCY = listArgument("concurrency", [1, 10]);
const MESSAGES = listArgument("messages", [5_000])[0];
const TRIALS = listArgument("trials", [3])[0];
const HANDLER_MS = listArgument("handler-ms", [0])[0];
const ENQUEUE_CHUNK = 1_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address == null || typeof address === "string") throw new Error("No port.");
  return address.port;
}

const port = await freePort();
const server = spawn(process.env.REDIS_SERVER ?? "redis-server", [
  "--port",
  String(port),
  "--bind",
  "127.0.0.1",
  "--save",
  "",
  "--appendonly",
  "no",
], { stdio: "ignore" });
const url = `redis://127.0.0.1:${port}`;
const admin = new Redis(url, { retryStrategy: (times) => (times > 50 ? null : 50) });
// Refused connections while the server starts are retried; not worth a log line.
admin.on("error", () => {});

/** The total number of calls of every command so far. */
async function commandCalls(): Promise<number> {
  const info = await admin.info("commandstats");
  let calls = 0;
  for (const match of info.matchAll(/calls=(\d+)/g)) calls += Number(match[1]);
  return calls;
}

async function drain(
  name: string,
  concurrency: number,
  prefetch: number,
): Promise<{ perSecond: number; commandsPerMessage: number }> {
  await using producer = new RedisMessageQueue({ url, queue: name });
  const messages = Array.from({ length: MESSAGES }, (_, i) => ({ i, body: "x".repeat(64) }));
  for (let i = 0; i < messages.length; i += ENQUEUE_CHUNK) {
    await producer.enqueueMany(messages.slice(i, i + ENQUEUE_CHUNK));
  }
  await using consumer = new RedisMessageQueue({ url, queue: name, concurrency, prefetch });
  const controller = new AbortController();
  let handled = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => done = resolve);
  // The commands of INFO itself and of the producer's idle connection are
  // a handful against thousands; they are not subtracted.
  const callsBefore = await commandCalls();
  const start = performance.now();
  const listening = consumer.listen(async () => {
    if (HANDLER_MS > 0) await new Promise((resolve) => setTimeout(resolve, HANDLER_MS));
    if (++handled === MESSAGES) done();
  }, { signal: controller.signal });
  await all;
  const seconds = (performance.now() - start) / 1000;
  controller.abort();
  await listening;
  const calls = await commandCalls() - callsBefore;
  await admin.del(...await admin.keys(`{fedwork:${name}}*`));
  return { perSecond: MESSAGES / seconds, commandsPerMessage: calls / MESSAGES };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

try {
  await admin.ping();
  process.stdout.write(
    `RedisMessageQueue drain of ${MESSAGES} messages, median of ${TRIALS}, ` +
      `handlers taking ${HANDLER_MS} ms ` +
      `(${process.release.name} ${process.version})\n`,
  );
  process.stdout.write("concurrency  prefetch      msg/s   (min–max)       commands/msg\n");
  for (const concurrency of CONCURRENCY) {
    for (const prefetch of PREFETCH) {
      const rates: number[] = [];
      const commands: number[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        const name = `bench-prefetch-${crypto.randomUUID().slice(0, 8)}`;
        const result = await drain(name, concurrency, prefetch);
        rates.push(result.perSecond);
        commands.push(result.commandsPerMessage);
      }
      process.stdout.write(
        `${String(concurrency).padStart(11)}${String(prefetch).padStart(10)}` +
          `${String(Math.round(median(rates))).padStart(11)}` +
          `   (${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))})`.padEnd(18) +
          `${median(commands).toFixed(2).padStart(14)}\n`,
      );
    }
  }
} finally {
  admin.disconnect();
  server.kill();
}
