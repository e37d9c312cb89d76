// The many-workers soak: producers in this process and several worker
// processes on one queue, with workers SIGKILLed at random and replaced,
// counting what is handled, lost and handled twice.  Used by the backends'
// soak tests at a short size and by bench/soak.ts at any size.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { childCommand, childEnvironment } from "./child-process.ts";
import { createTestNamespace } from "./namespace.ts";
import { loadQueueFactory } from "./queue-harness.ts";
import { deferred } from "./wait.ts";

/**
 * Options of {@link runQueueSoak}.
 * @since 0.3.0
 */
export interface QueueSoakOptions {
  /** The backend's factory module (see `MessageQueueFactory`). */
  readonly factoryModule: string;
  /** How many worker processes run at once (killed ones are replaced). */
  readonly workers: number;
  /** How many tasks the producers enqueue, numbered 0 to `tasks - 1`. */
  readonly tasks: number;
  /** How often a random worker is SIGKILLed, in milliseconds; 0: never. */
  readonly killEveryMs: number;
  /** The lease (or redelivery delay) the factory gives each instance; 2000 by default. */
  readonly leaseMs?: number;
  /** The `listen()` calls each worker runs on its instance; 2 by default. */
  readonly listeners?: number;
  /** How long each handler waits before returning, in milliseconds; 1 by default. */
  readonly handlerMs?: number;
  /** Concurrent producer loops in this process; 2 by default. */
  readonly producers?: number;
  /** Messages per `enqueueMany()` (or per round of `enqueue()`); 200 by default. */
  readonly batch?: number;
  /**
   * The share of tasks (0 to 1) that carry an ordering key (one of 64);
   * 0.1 by default.
   */
  readonly keyedShare?: number;
  /**
   * How long the run waits without any task handled for the first time
   * before it gives up and reports the rest as lost; by default 30 seconds
   * or ten leases, whichever is longer.
   */
  readonly stallTimeoutMs?: number;
  /** A seed for the choice of workers to kill; 1 by default. */
  readonly seed?: number;
  /** Called with a line of progress now and then. */
  readonly onProgress?: (line: string) => void;
}

/**
 * What {@link runQueueSoak} measured.
 * @since 0.3.0
 */
export interface QueueSoakReport {
  readonly tasks: number;
  readonly workers: number;
  /** How many workers were SIGKILLed. */
  readonly kills: number;
  /** From the first enqueue to the last task's first completion. */
  readonly durationMs: number;
  /** Tasks handled (once or more) per second over `durationMs`. */
  readonly throughputPerSecond: number;
  /** From the first enqueue to the last one confirmed. */
  readonly enqueueMs: number;
  /** Tasks never handled. */
  readonly lost: number;
  /** The first few lost task numbers. */
  readonly lostSample: readonly number[];
  /** Completions beyond the first, over all tasks. */
  readonly duplicates: number;
  /**
   * Tasks handled more than once where no completion came from a worker
   * that was later killed: not explained by at-least-once delivery.
   */
  readonly unexplainedDuplicates: number;
  /**
   * Handler starts of a task whose previous start was in a worker that was
   * not killed (a live worker's task handed to another).
   */
  readonly unexplainedRedeliveries: number;
  /**
   * From a worker's kill to the next start, in another worker, of a task
   * whose handler had started in it (count and percentiles, in ms).
   */
  readonly redeliveryDelayMs: {
    readonly count: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
}

interface Worker {
  readonly index: number;
  readonly child: ChildProcess;
  ready: boolean;
  killedAt: number | undefined;
  /** Tasks this worker completed (to mark them if it is killed). */
  readonly completed: number[];
}

/**
 * Runs the soak and returns its measurements; cleans the namespace up.
 * The run never fails on loss: the caller judges the report.
 * @param options The backend, the sizes and the kill interval.
 * @returns The measurements.
 * @throws {Error} When no worker becomes ready within a minute.
 * @since 0.3.0
 */
export async function runQueueSoak(options: QueueSoakOptions): Promise<QueueSoakReport> {
  const leaseMs = options.leaseMs ?? 2000;
  const listeners = options.listeners ?? 2;
  const handlerMs = options.handlerMs ?? 1;
  const producers = options.producers ?? 2;
  const batch = options.batch ?? 200;
  const keyedShare = options.keyedShare ?? 0.1;
  const stallTimeoutMs = options.stallTimeoutMs ?? Math.max(30_000, 10 * leaseMs);
  const tasks = options.tasks;
  const random = mulberry32(options.seed ?? 1);
  const progress = options.onProgress ?? (() => {});
  const namespace = createTestNamespace();
  const factory = await loadQueueFactory(options.factoryModule);

  const completions = new Uint32Array(tasks);
  const completedByKilled = new Uint8Array(tasks);
  const lastStarter = new Int32Array(tasks).fill(-1);
  const delays: number[] = [];
  let unexplainedRedeliveries = 0;
  let firstCompleted = 0;
  let lastFirstCompletionAt = 0;
  let lastProgressAt = performance.now();
  let kills = 0;
  const allWorkers: Worker[] = [];
  let live: Worker[] = [];
  const allDone = deferred();

  const onLine = (worker: Worker, line: string) => {
    if (line === "READY") {
      worker.ready = true;
      return;
    }
    const id = Number(line.slice(2));
    if (!(id >= 0 && id < tasks)) return;
    if (line.startsWith("S ")) {
      // A start read after its worker's kill may arrive after the start of
      // the same task in the worker that took over (two pipes, no order
      // between them): it says nothing new.
      if (worker.killedAt !== undefined) return;
      const previous = lastStarter[id];
      if (previous >= 0 && previous !== worker.index) {
        const killedAt = allWorkers[previous].killedAt;
        if (killedAt === undefined) unexplainedRedeliveries++;
        else delays.push(performance.now() - killedAt);
      }
      lastStarter[id] = worker.index;
    } else if (line.startsWith("D ")) {
      worker.completed.push(id);
      // A line read after the kill was written before it.
      if (worker.killedAt !== undefined) completedByKilled[id] = 1;
      if (completions[id]++ === 0) {
        firstCompleted++;
        lastFirstCompletionAt = lastProgressAt = performance.now();
        if (firstCompleted === tasks) allDone.resolve();
      }
    }
  };

  const spawnWorker = (): Worker => {
    const { command, args } = childCommand(new URL("./soak-worker.ts", import.meta.url), [
      options.factoryModule,
      namespace,
      String(leaseMs),
      String(listeners),
      String(handlerMs),
    ]);
    const child = spawn(command, args, {
      cwd: process.cwd(),
      env: childEnvironment(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const worker: Worker = {
      index: allWorkers.length,
      child,
      ready: false,
      killedAt: undefined,
      completed: [],
    };
    allWorkers.push(worker);
    let pending = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) onLine(worker, line);
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (stderr.length < 4000) stderr += chunk;
    });
    child.on("exit", (code, signal) => {
      if (worker.killedAt === undefined && signal !== "SIGKILL") {
        progress(`worker ${worker.index} exited (code ${code}, signal ${signal}): ${stderr}`);
      }
    });
    return worker;
  };

  const kill = (worker: Worker) => {
    worker.killedAt = performance.now();
    worker.child.kill("SIGKILL");
    for (const id of worker.completed) completedByKilled[id] = 1;
    live = live.filter((w) => w !== worker);
  };

  for (let i = 0; i < options.workers; i++) live.push(spawnWorker());
  const readyBy = performance.now() + 60_000;
  while (!live.some((w) => w.ready)) {
    if (performance.now() > readyBy) {
      for (const worker of live) kill(worker);
      throw new Error("No soak worker became ready within a minute.");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const started = performance.now();
  let enqueueMs = 0;
  const producing = (async () => {
    const queue = await factory.createQueue(namespace, { leaseMs });
    try {
      let next = 0;
      const loop = async () => {
        while (next < tasks) {
          const from = next;
          const to = next = Math.min(tasks, next + batch);
          const plain: { i: number }[] = [];
          for (let i = from; i < to; i++) {
            if (random() < keyedShare) {
              await queue.enqueue({ i }, { orderingKey: `key-${i % 64}` });
            } else plain.push({ i });
          }
          if (queue.enqueueMany != null) await queue.enqueueMany(plain);
          else for (const message of plain) await queue.enqueue(message);
        }
      };
      await Promise.all(Array.from({ length: producers }, loop));
      enqueueMs = performance.now() - started;
    } finally {
      await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
    }
  })();

  let killing = true;
  const killer = (async () => {
    if (options.killEveryMs <= 0) return;
    while (killing) {
      await new Promise((resolve) => setTimeout(resolve, options.killEveryMs));
      if (!killing) break;
      const candidates = live.filter((w) => w.ready);
      if (candidates.length === 0) continue;
      kill(candidates[Math.floor(random() * candidates.length)]);
      kills++;
      live.push(spawnWorker());
    }
  })();

  const reporter = setInterval(() => {
    progress(
      `${firstCompleted}/${tasks} handled, ${kills} kills, ` +
        `${Math.round((performance.now() - started) / 1000)} s`,
    );
  }, 5000);
  try {
    await producing;
    while (firstCompleted < tasks) {
      const stalled = performance.now() - lastProgressAt;
      if (stalled > stallTimeoutMs) break;
      await Promise.race([
        allDone.promise,
        new Promise((resolve) => setTimeout(resolve, Math.min(1000, stallTimeoutMs))),
      ]);
    }
    killing = false;
    await killer;
    // Late duplicates: tasks a killed worker completed but had not yet
    // acknowledged come back after a lease.
    await new Promise((resolve) => setTimeout(resolve, 2 * leaseMs + 1000));
  } finally {
    killing = false;
    clearInterval(reporter);
    for (const worker of live) {
      worker.killedAt ??= performance.now();
      worker.child.kill("SIGKILL");
    }
    await Promise.all(
      allWorkers.map((w) =>
        w.child.exitCode != null || w.child.signalCode != null
          ? undefined
          : new Promise((resolve) => w.child.once("exit", resolve))
      ),
    );
    await factory.cleanup?.(namespace);
  }

  const lostSample: number[] = [];
  let lost = 0;
  let duplicates = 0;
  let unexplainedDuplicates = 0;
  for (let id = 0; id < tasks; id++) {
    if (completions[id] === 0) {
      lost++;
      if (lostSample.length < 20) lostSample.push(id);
    } else if (completions[id] > 1) {
      duplicates += completions[id] - 1;
      if (completedByKilled[id] === 0) unexplainedDuplicates++;
    }
  }
  const durationMs = (firstCompleted === tasks ? lastFirstCompletionAt : performance.now()) -
    started;
  delays.sort((a, b) => a - b);
  const at = (p: number) =>
    delays.length === 0
      ? 0
      : Math.round(delays[Math.min(delays.length - 1, Math.ceil(p / 100 * delays.length) - 1)]);
  return {
    tasks,
    workers: options.workers,
    kills,
    durationMs: Math.round(durationMs),
    throughputPerSecond: Math.round(firstCompleted / (durationMs / 1000)),
    enqueueMs: Math.round(enqueueMs),
    lost,
    lostSample,
    duplicates,
    unexplainedDuplicates,
    unexplainedRedeliveries,
    redeliveryDelayMs: {
      count: delays.length,
      p50: at(50),
      p90: at(90),
      p99: at(99),
      max: delays.length === 0 ? 0 : Math.round(delays[delays.length - 1]),
    },
  };
}

/** A small seeded generator of numbers in [0, 1). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
