// The measurements, shared by every system: bulk enqueue, drain at each
// concurrency, and trickle pickup latency.
import { createHash } from "node:crypto";
import {
  CONCURRENCIES,
  type Driver,
  type Payload,
  type Sizes,
  type TrialResult,
} from "./driver.ts";
import { percentile } from "./stats.ts";

/** The handlers' work: hashes `bytes` bytes (none when 0). */
function handlerWork(bytes: number): (payload: Payload) => void {
  if (bytes === 0) return () => {};
  const buffer = new Uint8Array(bytes);
  return ({ i }) => {
    buffer[0] = i & 0xff;
    createHash("sha256").update(buffer).digest();
  };
}

function payloads(count: number): Payload[] {
  return Array.from({ length: count }, (_, i) => ({ i }));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Rejects after `ms` with a message naming what timed out. */
function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Bulk enqueue into an empty store, in messages per second. */
export async function measureEnqueue(driver: Driver, sizes: Sizes): Promise<number> {
  await driver.reset();
  const batch = payloads(sizes.enqueue);
  const start = performance.now();
  await driver.enqueueBulk(batch, sizes.chunk);
  return sizes.enqueue / ((performance.now() - start) / 1000);
}

/**
 * Stores `sizes.drain` messages (not timed), then starts workers with
 * `concurrency` and times them from the first handler start to the last, in
 * messages per second.  Timing from the first handler leaves out how long
 * each system takes to connect and start its workers, which is paid once
 * per process, not per message.  Timing stops early, on the messages
 * handled so far, once `sizes.drainBudgetMs` have passed.
 */
export async function measureDrain(
  driver: Driver,
  sizes: Sizes,
  concurrency: number,
  timeoutMs: number,
): Promise<number> {
  await driver.reset();
  await driver.enqueueBulk(payloads(sizes.drain), sizes.chunk);
  let handled = 0;
  let first = 0;
  let last = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  const work = handlerWork(sizes.handlerWork);
  let counted = 0;
  let budget: ReturnType<typeof setTimeout> | undefined;
  const workers = await driver.work(concurrency, (payload) => {
    const now = performance.now();
    work(payload);
    if (counted > 0) return; // Measured already; the workers are stopping.
    if (handled === 0) {
      first = now;
      budget = setTimeout(() => {
        counted = handled;
        finish();
      }, sizes.drainBudgetMs);
    }
    last = now;
    if (++handled === sizes.drain) {
      counted = handled;
      finish();
    }
  });
  try {
    await deadline(finished, timeoutMs, `drain at concurrency ${concurrency}`);
  } finally {
    clearTimeout(budget);
    await workers.stop();
  }
  return (counted - 1) / ((last - first) / 1000);
}

/**
 * Sends `sizes.pickup` messages one at a time at a steady rate to idle
 * workers (concurrency 1) and records, for each, the time from the start
 * of its enqueue to the start of its handler.  Ten messages sent first warm
 * up connections and caches and are not counted.
 */
export async function measurePickup(
  driver: Driver,
  sizes: Sizes,
  timeoutMs: number,
): Promise<{ p50: number; p99: number }> {
  await driver.reset();
  const warmup = 10;
  const total = warmup + sizes.pickup;
  const sentAt = new Array<number>(total).fill(NaN);
  const latencies: number[] = [];
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => finish = resolve);
  let arrived = 0;
  const work = handlerWork(sizes.handlerWork);
  const workers = await driver.work(1, (payload) => {
    const now = performance.now();
    work(payload);
    const { i } = payload;
    if (i >= warmup) latencies.push(now - sentAt[i]);
    if (++arrived === total) finish();
  });
  try {
    // Warm up: one message at a time, each waited for.
    for (let i = 0; i < warmup; i++) {
      sentAt[i] = performance.now();
      await driver.enqueueOne({ i });
      await deadline(
        (async () => {
          while (arrived <= i) await sleep(1);
        })(),
        timeoutMs,
        "pickup warm-up",
      );
    }
    // Let the workers go idle, then send on a fixed schedule (not waiting
    // for handlers), so that a slow pickup does not slow the sender down.
    await sleep(100);
    const interval = 1000 / sizes.pickupRate;
    const start = performance.now();
    const sends: Promise<void>[] = [];
    for (let n = 0; n < sizes.pickup; n++) {
      const due = start + n * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const i = warmup + n;
      sentAt[i] = performance.now();
      sends.push(driver.enqueueOne({ i }));
    }
    await Promise.all(sends);
    await deadline(finished, timeoutMs, "pickup");
  } finally {
    await workers.stop();
  }
  if (latencies.length !== sizes.pickup) {
    throw new Error(`pickup: ${latencies.length} of ${sizes.pickup} messages came back intact`);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** The concurrency of the uncounted warm-up drain. */
const WARM_UP_CONCURRENCY = 10;

/** Takes every measurement of one trial. */
export async function measureAll(
  driver: Driver,
  sizes: Sizes,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<TrialResult> {
  const enqueue = await measureEnqueue(driver, sizes);
  log(`enqueue ${Math.round(enqueue)}/s`);
  // Each trial runs in a fresh process: drains that are not counted come
  // first, the same for every system, so that the timed drains (a few
  // tenths of a second for the quicker systems) measure compiled code and
  // a settled heap rather than the warm-up.
  const warmUpStart = performance.now();
  let warmedUp = 0;
  while (warmedUp < sizes.warmUp && performance.now() - warmUpStart < sizes.warmUpBudgetMs) {
    const rate = await measureDrain(driver, sizes, WARM_UP_CONCURRENCY, timeoutMs);
    warmedUp += sizes.drain;
    log(`warm-up drain c=${WARM_UP_CONCURRENCY} ${Math.round(rate)}/s (not counted)`);
  }
  const drain: Record<string, number> = {};
  for (const c of CONCURRENCIES) {
    drain[c] = await measureDrain(driver, sizes, c, timeoutMs);
    log(`drain c=${c} ${Math.round(drain[c])}/s`);
  }
  const pickup = await measurePickup(driver, sizes, timeoutMs);
  log(`pickup p50 ${pickup.p50.toFixed(2)} ms, p99 ${pickup.p99.toFixed(2)} ms`);
  await driver.reset();
  return { enqueue, drain, pickupP50: pickup.p50, pickupP99: pickup.p99, sizes };
}
