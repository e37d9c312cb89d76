// The conformance tests of tasks whose handler gets many payloads per run
// (`handleMany`) over a backend: runs fill up to their size from what a
// worker takes, a run short of its size waits `wait`, a failed item is
// retried alone, and (on a durable engine) a worker killed in the middle
// of a run loses none of its items.
import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import { type TaskItem, TaskItemFailure, type TaskItemResults } from "@fedwork/core";
import {
  type BatchHandlerApp,
  type BatchHandlerBackend,
  buildBatchHandlerApp,
  closeBatchHandlerBackend,
} from "./batch-handler-app.ts";
import { childCommand, childEnvironment } from "./child-process.ts";
import { createTestNamespace } from "./namespace.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { openBackendModule } from "./worker-process.ts";
import { deferred, waitUntil, within } from "./wait.ts";

export type { BatchHandlerBackend } from "./batch-handler-app.ts";

// Bounds how long a broken setup takes to fail; a working one is far
// quicker, even on a loaded machine.
const STEP_TIMEOUT_MS = 90_000;

/**
 * Options for {@link testBatchHandlers}.
 * @since 0.4.0
 */
export interface BatchHandlerConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module (which must not register tests) exporting
   * `open(namespace)`, which returns a {@link BatchHandlerBackend} (or a
   * promise of one) whose engines share their data per namespace, and
   * optionally `cleanup(namespace)`.  Its queue must run at least 8
   * handlers at once; on a durable engine its lease should be short
   * (seconds): the crash test kills a worker.
   */
  readonly backendModule: string;
  /**
   * Whether messages outlive a process, so that the items of a worker
   * killed in the middle of a run reach another worker (the crash test).
   */
  readonly durable: boolean;
  /**
   * Whether the queue's listener lets a waiting handler give its slot up
   * (`MessageRedelivery.yieldSlot()`), so that a run fills to its size
   * beyond the queue's `concurrency`.  The backend module's `open()` then
   * takes a second argument, `{ concurrency }`, for the queue.
   */
  readonly yieldsSlots?: boolean;
  /**
   * Whether the queue sizes its claims (or prefetch) to `listen()`'s
   * `batchSize`, so that a listener holds a run's worth of messages after
   * one claim although none of its handlers returns or gives its slot up.
   * The backend module's `open()` takes `{ concurrency }` (see
   * `yieldsSlots`), and the queue's own prefetch must be below 40.
   * @since 0.4.0
   */
  readonly claimsBatches?: boolean;
}

interface BackendModule {
  open(
    namespace: string,
    options?: { readonly concurrency?: number },
  ): BatchHandlerBackend | Promise<BatchHandlerBackend>;
  cleanup?(namespace: string): Promise<void>;
}

/** Runs `body` with a worker of `app` on a fresh namespace, then closes everything. */
async function withApp(
  options: BatchHandlerConformanceOptions,
  taskName: string,
  handleMany: { readonly size: number; readonly waitMs: number },
  handler: (
    items: readonly TaskItem<{ n: number }>[],
  ) => TaskItemResults<void> | void | Promise<TaskItemResults<void> | void>,
  body: (app: BatchHandlerApp) => Promise<void>,
  namespace = createTestNamespace(),
  concurrency?: number,
): Promise<void> {
  const backend = concurrency == null
    ? await openBackendModule<BatchHandlerBackend>(options.backendModule, namespace)
    : await (await import(options.backendModule) as BackendModule).open(namespace, {
      concurrency,
    });
  const app = buildBatchHandlerApp(backend, taskName, handleMany, handler);
  const controller = new AbortController();
  const worker = app.federation.startQueue(undefined, { signal: controller.signal });
  try {
    await body(app);
  } finally {
    controller.abort();
    await worker;
    await closeBatchHandlerBackend(backend);
    const module = await import(options.backendModule) as BackendModule;
    await module.cleanup?.(namespace);
  }
}

/**
 * Registers the conformance tests of `handleMany` tasks over a backend:
 *
 * - 8 items of a task with `size` 4 run in two runs of 4 (a worker fills
 *   a run from the messages it takes, claims and prefetches);
 * - 3 items of a task with `size` 10 run together once `wait` has passed;
 * - an item its run failed with a `TaskItemFailure` is retried on its own,
 *   while the others of its run complete once;
 * - when `durable`, a worker process SIGKILLed in the middle of a run
 *   loses none of its items: another worker runs every one of them.
 * @param options The backend's name, its module and whether it is durable.
 * @since 0.4.0
 */
export function testBatchHandlers(options: BatchHandlerConformanceOptions): void {
  test(`${options.name}: a handleMany task's items run in runs of its size`, async () => {
    const runs: number[][] = [];
    const all = deferred();
    await withApp(options, "batch-size", { size: 4, waitMs: 60_000 }, (items) => {
      runs.push(items.map((item) => item.data.n));
      if (runs.flat().length >= 8) all.resolve();
    }, async ({ federation, task }) => {
      await federation.createContext(new URL("https://batch.example/")).enqueueTaskMany(
        task,
        Array.from({ length: 8 }, (_, n) => ({ n })),
      );
      await within(all.promise, () => `8 items; ran ${JSON.stringify(runs)}`, STEP_TIMEOUT_MS);
    });
    assertEquals(runs.map((run) => run.length), [4, 4]);
    assertEquals(runs.flat().sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7]);
  });

  test(`${options.name}: a handleMany run short of its size starts after wait`, async () => {
    const runs: { readonly items: number[]; readonly afterMs: number }[] = [];
    const all = deferred();
    let enqueuedAt = 0;
    await withApp(options, "batch-wait", { size: 10, waitMs: 1_000 }, (items) => {
      runs.push({
        items: items.map((item) => item.data.n),
        afterMs: performance.now() - enqueuedAt,
      });
      if (runs.flatMap((run) => run.items).length >= 3) all.resolve();
    }, async ({ federation, task }) => {
      enqueuedAt = performance.now();
      await federation.createContext(new URL("https://batch.example/")).enqueueTaskMany(
        task,
        [{ n: 1 }, { n: 2 }, { n: 3 }],
      );
      await within(all.promise, () => `3 items; ran ${JSON.stringify(runs)}`, STEP_TIMEOUT_MS);
    });
    // One enqueue of three: a worker takes them together.
    assertEquals(runs.map((run) => run.items.sort()), [[1, 2, 3]]);
    assert(runs[0].afterMs >= 990, `the run started ${runs[0].afterMs} ms after the enqueue`);
  });

  test(`${options.name}: a failed handleMany item is retried alone`, async () => {
    const runs: { n: number; attempt: number }[][] = [];
    const done = deferred();
    await withApp(options, "batch-retry", { size: 3, waitMs: 300 }, (items) => {
      runs.push(items.map((item) => ({ n: item.data.n, attempt: item.attempt })));
      if (items.some((item) => item.data.n === 2 && item.attempt > 0)) done.resolve();
      return items.map((item) =>
        item.data.n === 2 && item.attempt === 0
          ? new TaskItemFailure(new Error("item 2 fails once"))
          : undefined
      );
    }, async ({ federation, task }) => {
      await federation.createContext(new URL("https://batch.example/")).enqueueTaskMany(
        task,
        [{ n: 1 }, { n: 2 }, { n: 3 }],
      );
      await within(done.promise, () => `the retry; ran ${JSON.stringify(runs)}`, STEP_TIMEOUT_MS);
    });
    const ran = runs.flat().sort((a, b) => a.n - b.n || a.attempt - b.attempt);
    assertEquals(ran, [
      { n: 1, attempt: 0 },
      { n: 2, attempt: 0 },
      { n: 2, attempt: 1 },
      { n: 3, attempt: 0 },
    ]);
    assertEquals(runs.find((run) => run.some((item) => item.attempt > 0)), [{ n: 2, attempt: 1 }]);
  });

  if (options.yieldsSlots) {
    test(`${options.name}: a handleMany run fills to its size beyond the queue's concurrency`, async () => {
      const runs: number[][] = [];
      const all = deferred();
      await withApp(
        options,
        "batch-yield",
        { size: 6, waitMs: 60_000 },
        (items) => {
          runs.push(items.map((item) => item.data.n));
          if (runs.flat().length >= 6) all.resolve();
        },
        async ({ federation, task }) => {
          await federation.createContext(new URL("https://batch.example/")).enqueueTaskMany(
            task,
            Array.from({ length: 6 }, (_, n) => ({ n })),
          );
          await within(all.promise, () => `6 items; ran ${JSON.stringify(runs)}`, STEP_TIMEOUT_MS);
        },
        undefined,
        1,
      );
      // One handler slot, and yet one run of 6: the waiting items gave
      // theirs up.
      assertEquals(runs.map((run) => run.length), [6]);
    });
  }

  if (options.claimsBatches) {
    test(`${options.name}: a listener with a batchSize holds a run's worth of messages at once`, async () => {
      const namespace = createTestNamespace();
      const module = await import(options.backendModule) as BackendModule;
      const backend = await module.open(namespace, { concurrency: 1 });
      const controller = new AbortController();
      const release = deferred();
      const started = deferred();
      let listening: Promise<void> | undefined;
      try {
        const size = 40;
        await backend.queue.enqueueMany!(Array.from({ length: size }, (_, n) => ({ n })));
        // No handler returns or gives its slot up: only the claim (or the
        // prefetch) can have taken the others.
        listening = backend.queue.listen(async () => {
          started.resolve();
          await release.promise;
        }, { signal: controller.signal, batchSize: size });
        await within(started.promise, "the first message", STEP_TIMEOUT_MS);
        // Right after the first claim: a listener whose handlers all stay
        // busy hands its prefetched messages back after a while.
        let ready: number | undefined;
        await waitUntil(async () => (ready = (await backend.queue.getDepth!()).ready) === 0, {
          what: () => `every message to be held by the listener; ${ready} are ready`,
          timeoutMs: 10_000,
          intervalMs: 10,
        });
      } finally {
        controller.abort();
        release.resolve();
        await listening;
        await closeBatchHandlerBackend(backend);
        await module.cleanup?.(namespace);
      }
    });

    test(`${options.name}: listen() rejects a batchSize that is not a positive integer`, async () => {
      const namespace = createTestNamespace();
      const module = await import(options.backendModule) as BackendModule;
      const backend = await module.open(namespace, { concurrency: 1 });
      try {
        for (const batchSize of [0, 2.5]) {
          let error: unknown;
          try {
            await backend.queue.listen(() => {}, { batchSize });
          } catch (caught) {
            error = caught;
          }
          assert(error instanceof RangeError, `batchSize ${batchSize}: got ${error}`);
          assert(error.message.includes("batchSize"), error.message);
        }
      } finally {
        await closeBatchHandlerBackend(backend);
        await module.cleanup?.(namespace);
      }
    });
  }

  if (options.durable) {
    test(`${options.name}: a worker killed in the middle of a handleMany run loses no item`, async () => {
      const namespace = createTestNamespace();
      const taskName = "batch-crash";
      const enqueuer = await openBackendModule<BatchHandlerBackend>(
        options.backendModule,
        namespace,
      );
      const web = buildBatchHandlerApp(enqueuer, taskName, { size: 4, waitMs: 60_000 }, () => {});
      const child = startWorker(options.backendModule, namespace, taskName, 4);
      let ran: number[] = [];
      try {
        await child.waitFor(/^READY$/, "the worker to listen");
        await web.federation.createContext(new URL("https://batch.example/")).enqueueTaskMany(
          web.task,
          [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }],
        );
        const line = await child.waitFor(/^RUN /, "the worker to start the run");
        assertEquals(line.slice(4).split(",").map(Number).sort(), [1, 2, 3, 4]);
        await child.kill();
      } finally {
        await child.kill();
        await closeBatchHandlerBackend(enqueuer);
      }
      const all = deferred();
      await withApp(options, taskName, { size: 4, waitMs: 200 }, (items) => {
        ran = [...ran, ...items.map((item) => item.data.n)];
        if (new Set(ran).size === 4) all.resolve();
      }, async () => {
        await within(all.promise, () => `the 4 items again; ran ${ran}`, STEP_TIMEOUT_MS);
      }, namespace);
      assertEquals([...new Set(ran)].sort(), [1, 2, 3, 4]);
    });
  }
}

interface Worker {
  waitFor(pattern: RegExp, what: string): Promise<string>;
  kill(): Promise<void>;
}

function startWorker(backendModule: string, namespace: string, task: string, size: number): Worker {
  const { command, args } = childCommand(
    new URL("./batch-handler-worker.ts", import.meta.url),
    [backendModule, namespace, task, String(size)],
  );
  const child: ChildProcess = spawn(command, args, {
    cwd: process.cwd(),
    env: childEnvironment(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  let stderr = "";
  let exited = false;
  const died = deferred();
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop()!;
    lines.push(...parts);
    for (const waiter of waiters) waiter();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-6000);
  });
  child.on("exit", () => {
    exited = true;
    died.resolve();
    for (const waiter of waiters) waiter();
  });
  return {
    async waitFor(pattern, what) {
      let look = () => {};
      const found = new Promise<string>((resolve, reject) => {
        look = () => {
          const line = lines.find((line) => pattern.test(line));
          if (line !== undefined) resolve(line);
          else if (exited) reject(new Error(`The worker exited before ${what}.\n${stderr}`));
        };
      });
      waiters.add(look);
      look();
      try {
        return await within(found, () => `${what}; stderr:\n${stderr}`, STEP_TIMEOUT_MS);
      } finally {
        waiters.delete(look);
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await within(died.promise, "the worker to die", 30_000).catch(() => {});
      }
    },
  };
}
