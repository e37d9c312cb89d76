// The conformance tests of the concurrency and rateLimit options of
// defineTask(): the suite enqueues the tasks of limits-tasks.ts on the
// backend's engines, two real worker processes (limits-process.ts) run
// them, and every run reports to a loopback HTTP counter in the suite,
// which sees how many runs of a key are inside their handler at once and
// when each paced run started.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { createFederation } from "@fedwork/core";
import { childCommand, childEnvironment } from "./child-process.ts";
import { startTestServer, type TestServer } from "./http-server.ts";
import { defineLimitTasks, KEY_LIMIT, type LimitTasks, RATE_PER_SECOND } from "./limits-tasks.ts";
import { createTestNamespace } from "./namespace.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { deferred, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; this only bounds how long a broken setup takes to fail.
const STEP_TIMEOUT_MS = 90_000;
// How long the runs of one test may take at most, on a loaded machine.
const RUNS_TIMEOUT_MS = 180_000;

/**
 * Options for {@link testTaskLimits}.
 * @since 0.4.0
 */
export interface TaskLimitsConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the processes import (so it must not register
   * tests), exporting `open(namespace)`, which returns the queue, the
   * key–value store (with `cas()`) and optionally the pub/sub of one
   * process, sharing their data per namespace, and optionally
   * `cleanup(namespace)`.  Give the queue a lease of tens of seconds: on
   * a loaded machine a short one runs out and hands a running message out
   * again, which is not what this suite measures.
   */
  readonly backendModule: string;
}

interface Worker {
  ready(): Promise<void>;
  /** The last of its output. */
  output(): string;
  kill(): Promise<void>;
}

function startWorker(
  options: TaskLimitsConformanceOptions,
  namespace: string,
  counter: URL,
): Worker {
  const { command, args } = childCommand(new URL("./limits-process.ts", import.meta.url), [
    options.backendModule,
    namespace,
    counter.href,
  ]);
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let exited = false;
  const ready = deferred<void>();
  const died = deferred<void>();
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    output = (output + chunk).slice(-6000);
    if (/^READY$/m.test(output)) ready.resolve();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    output = (output + chunk).slice(-6000);
  });
  child.on("exit", () => {
    exited = true;
    died.resolve();
  });
  const exitedEarly = died.promise.then(() => {
    throw new Error(`The worker process exited before it was ready:\n${output}`);
  });
  exitedEarly.catch(() => {});
  return {
    output: () => output,
    ready: () =>
      within(
        Promise.race([ready.promise, exitedEarly]),
        () => `the worker to start (exited: ${exited}); ${output}`,
        STEP_TIMEOUT_MS,
      ),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await within(died.promise, "the process to die", 30_000).catch(() => {});
      }
    },
  };
}

/** What the counter saw. */
interface Counter {
  /** How many runs of each key are between `/enter` and `/leave`. */
  readonly running: Map<string, number>;
  /** The most of each key seen at once. */
  readonly most: Map<string, number>;
  /** When each `/leave` of each key came, in `performance.now()` time. */
  readonly left: Map<string, number[]>;
  /** When each paced run started, in epoch milliseconds, as it said. */
  readonly starts: number[];
  /** Resolves once `count` warm-up runs have reported. */
  warmedUp(count: number): Promise<void>;
  /** How many live holders the key's store entry had at each `/enter`. */
  readonly holdersSeen: number[];
  /** `key:i` of every run that entered, in order. */
  readonly entered: string[];
  /** Resolves once `count` runs have left or started. */
  settled(count: number): Promise<void>;
}

async function startCounter(): Promise<{ server: TestServer; counter: Counter }> {
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const left = new Map<string, number[]>();
  const starts: number[] = [];
  const entered: string[] = [];
  const holdersSeen: number[] = [];
  let done = 0;
  let warmed = 0;
  let warmWaiter: { count: number; resolve: () => void } | undefined;
  let waiter: { count: number; resolve: () => void } | undefined;
  const server = await startTestServer((request) => {
    const url = new URL(request.url);
    const key = url.searchParams.get("key") ?? "";
    switch (url.pathname) {
      case "/enter": {
        entered.push(`${key}:${url.searchParams.get("i")}`);
        holdersSeen.push(Number(url.searchParams.get("holders")));
        const now = (running.get(key) ?? 0) + 1;
        running.set(key, now);
        most.set(key, Math.max(most.get(key) ?? 0, now));
        break;
      }
      case "/leave":
        running.set(key, (running.get(key) ?? 0) - 1);
        left.set(key, [...left.get(key) ?? [], performance.now()]);
        done++;
        break;
      case "/start":
        starts.push(Number(url.searchParams.get("at")));
        done++;
        break;
      case "/warm":
        warmed++;
        if (warmWaiter != null && warmed >= warmWaiter.count) warmWaiter.resolve();
        return new Response("ok");
      default:
        return new Response("unknown", { status: 404 });
    }
    if (waiter != null && done >= waiter.count) waiter.resolve();
    return new Response("ok");
  });
  return {
    server,
    counter: {
      running,
      most,
      left,
      starts,
      holdersSeen,
      entered,
      warmedUp(count) {
        if (warmed >= count) return Promise.resolve();
        const all = deferred<void>();
        warmWaiter = { count, resolve: all.resolve };
        return within(
          all.promise,
          () => `${count} warm-up runs; ${warmed} so far`,
          RUNS_TIMEOUT_MS,
        );
      },
      settled(count) {
        if (done >= count) return Promise.resolve();
        const all = deferred<void>();
        waiter = { count, resolve: all.resolve };
        return within(all.promise, () => `${count} runs; ${done} so far`, RUNS_TIMEOUT_MS);
      },
    },
  };
}

async function withWorkers(
  options: TaskLimitsConformanceOptions,
  body: (
    tasks: LimitTasks,
    enqueue: ReturnType<typeof enqueuer>,
    counter: Counter,
  ) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const { server, counter } = await startCounter();
  const imported = await import(options.backendModule) as {
    open(namespace: string): ShutdownBackend | Promise<ShutdownBackend>;
    cleanup?: (namespace: string) => Promise<void>;
  };
  const backend = await imported.open(namespace);
  const workers: Worker[] = [];
  try {
    // The suite only enqueues: it starts no worker of its own.
    const federation = createFederation<void>({
      kv: backend.kv,
      queue: backend.queue,
      manuallyStartQueue: true,
    });
    const tasks = defineLimitTasks(federation, server.url.href);
    for (let i = 0; i < 2; i++) workers.push(startWorker(options, namespace, server.url));
    await Promise.all(workers.map((worker) => worker.ready()));
    try {
      await body(tasks, enqueuer(federation), counter);
    } catch (error) {
      const outputs = workers.map((worker, i) => `worker ${i}:\n${worker.output()}`);
      throw new Error(`${(error as Error).message}\n${outputs.join("\n")}`, { cause: error });
    }
    for (const [i, worker] of workers.entries()) {
      assert(!/^ERROR /m.test(worker.output()), `worker ${i} had failures:\n${worker.output()}`);
    }
  } finally {
    await Promise.all(workers.map((worker) => worker.kill()));
    for (const engine of [backend.pubsub, backend.kv, backend.queue]) {
      await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
    }
    await imported.cleanup?.(namespace);
    await server.close();
  }
}

function enqueuer(federation: ReturnType<typeof createFederation<void>>) {
  const ctx = federation.createContext(new URL("https://limits.example/"), undefined);
  return ctx.enqueueTaskMany.bind(ctx);
}

/**
 * Registers the task limit tests of a backend, with two real worker
 * processes of three runs at a time each, on the runtime running the
 * tests: a key limited to 2 never has 3 runs at once in 200 tasks (and
 * reaches 2), while runs of other keys enqueued after them finish first;
 * and a rate of 20 a second over 100 tasks takes at least 4.5 s from the first
 * start to the last.
 * @param options The backend's name and module.
 * @since 0.4.0
 */
export function testTaskLimits(options: TaskLimitsConformanceOptions): void {
  test(`${options.name}: a key limited to ${KEY_LIMIT} never has more runs at once across two processes`, () =>
    withWorkers(options, async ({ limited }, enqueue, counter) => {
      await enqueue(limited, Array.from({ length: 200 }, (_, i) => ({ key: "busy", i })));
      await enqueue(limited, Array.from({ length: 20 }, (_, i) => ({ key: `other-${i}`, i })));
      await counter.settled(220);
      // The store's own view: never more live holders than the limit.
      assert(
        Math.max(...counter.holdersSeen) <= KEY_LIMIT,
        `holders seen: ${counter.holdersSeen.join(",")}`,
      );
      assertEquals(counter.most.get("busy"), KEY_LIMIT);
      assertEquals(counter.left.get("busy")?.length, 200);
      assertEquals(new Set(counter.entered).size, 220, "a task ran twice");
      // Other keys do not wait for the busy one: all of them are done
      // before its last run is.
      const lastBusy = Math.max(...counter.left.get("busy")!);
      for (let i = 0; i < 20; i++) {
        const key = `other-${i}`;
        assertEquals(counter.left.get(key)?.length, 1, key);
        assert(counter.left.get(key)![0] < lastBusy, `${key} waited for the busy key`);
      }
    }));

  test(`${options.name}: a rate of ${RATE_PER_SECOND} a second over 100 tasks takes about 5 s, never less`, () =>
    withWorkers(options, async ({ paced, warm }, enqueue, counter) => {
      // A worker's first runs are slow (code not yet compiled, first
      // connections): warm both up, so that the first start is on time.
      await enqueue(warm, Array.from({ length: 12 }, (_, i) => ({ i })));
      await counter.warmedUp(12);
      const enqueuedAt = Date.now();
      await enqueue(paced, Array.from({ length: 100 }, (_, i) => ({ i })));
      await counter.settled(100);
      const starts = [...counter.starts].sort((a, b) => a - b);
      assertEquals(starts.length, 100);
      // 99 intervals of 50 ms: 4.95 s.  Never much less (the rate holds);
      // more only within a loose bound, since a loaded machine hands runs
      // out late (a CI run saw 6.4 s) and that is not what is tested here.
      const span = starts.at(-1)! - starts[0];
      assert(span >= 4_500 && span <= 15_000, `100 starts took ${Math.round(span)} ms`);
      // Never ahead of the rate: the k-th start cannot come before k
      // intervals after the enqueue (reserved starts are exactly 50 ms
      // apart, and a run starts at or after its own; a queue that hands
      // runs out late makes them bunch up afterwards, never come early).
      // Without the limit, the 100th would start well within a second.
      for (let k = 0; k < starts.length; k++) {
        const after = starts[k] - enqueuedAt;
        assert(after >= k * (1_000 / RATE_PER_SECOND) - 10, `start ${k} came ${after} ms in`);
      }
    }));
}
