// The clean-shutdown conformance tests: a real worker process on the
// backend's engines (shutdown-worker.ts), stopped with SIGTERM, must exit
// by itself with code 0 within its grace plus a margin, after letting a
// short task finish or aborting a long one at the end of the grace; on a
// durable backend a second worker then runs the aborted task.
import type { KvStore, MessageQueue, PubSub } from "@fedwork/core";
import { startSuiteWorker } from "./suite-worker.ts";
import { createTestNamespace } from "./namespace.ts";
import { assert, assertEquals, fail, test } from "./test-runner.ts";
import { within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; these only bound how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
const EXIT_MARGIN_MS = 30_000;
// A second worker gets the aborted task once the queue hands it out again
// (a hand-back delay, a redelivery, a requeue): seconds, not minutes.
const RERUN_TIMEOUT_MS = 90_000;
// The grace of the test that aborts its task: long enough to be seen.
const SHORT_GRACE_MS = 1_500;
// The grace of the test whose task finishes: the process must not wait it
// out.
const LONG_GRACE_MS = 60_000;

/**
 * What a backend module's `open()` returns for one worker process: its own
 * clients of the engines.  The worker disposes of each (when it is
 * `AsyncDisposable`) after its federation closed.
 * @since 0.4.0
 */
export interface ShutdownBackend {
  /** The message queue, for every role. */
  readonly queue: MessageQueue;
  /** The key–value store. */
  readonly kv: KvStore;
  /** The pub/sub transport, if the engine has one. */
  readonly pubsub?: PubSub;
}

/**
 * Options for {@link testGracefulShutdown}.
 * @since 0.4.0
 */
export interface GracefulShutdownConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the worker processes import (so it must not
   * register tests), exporting `open(namespace)`, which returns a
   * {@link ShutdownBackend} (or a promise of one) whose engines share
   * their data per namespace, and optionally `cleanup(namespace)`, which
   * removes what a test left.  E.g.
   * `new URL("./testdata/shutdown-backend.ts", import.meta.url).href`.
   */
  readonly backendModule: string;
  /**
   * Whether messages outlive a process, so that a second worker runs the
   * task the first one's shutdown aborted.
   */
  readonly durable: boolean;
}

interface Worker {
  readonly lines: string[];
  waitFor(pattern: RegExp, what: string, timeoutMs: number): Promise<string>;
  /** Resolves with the exit code and signal, and when it came. */
  readonly exited: Promise<{ code: number | null; signal: string | null; at: number }>;
  readonly output: () => string;
  terminate(): number;
  kill(): Promise<void>;
}

function startWorker(
  options: GracefulShutdownConformanceOptions,
  namespace: string,
  mode: "hold" | "finish-in-grace" | "finish" | "enqueue-only",
  graceMs: number,
  enqueue: boolean,
): Worker {
  const worker = startSuiteWorker(new URL("./shutdown-worker.ts", import.meta.url), [
    options.backendModule,
    namespace,
    mode,
    String(graceMs),
    enqueue ? "yes" : "no",
  ]);
  return {
    lines: worker.lines,
    exited: worker.exited,
    output: worker.output,
    waitFor: worker.waitFor,
    terminate: () => worker.signal("SIGTERM"),
    kill: () => worker.kill(EXIT_MARGIN_MS),
  };
}

/** SIGTERMs `worker` and asserts it exits with code 0 within `ceilingMs`. */
async function terminateAndExit(worker: Worker, ceilingMs: number): Promise<number> {
  const sentAt = worker.terminate();
  const { code, signal, at } = await within(
    worker.exited,
    () => `the worker to exit after SIGTERM; ${worker.output()}`,
    ceilingMs,
  );
  assertEquals(
    { code, signal },
    { code: 0, signal: null },
    `the worker's exit after SIGTERM; ${worker.output()}`,
  );
  assert(
    worker.lines.includes("DISPOSED"),
    `the worker exited before disposing of its engines; ${worker.output()}`,
  );
  return at - sentAt;
}

async function withNamespace(
  options: GracefulShutdownConformanceOptions,
  body: (namespace: string, workers: Worker[]) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const workers: Worker[] = [];
  try {
    await body(namespace, workers);
  } finally {
    await Promise.all(workers.map((worker) => worker.kill()));
    const imported = await import(options.backendModule) as {
      cleanup?: (namespace: string) => Promise<void>;
    };
    await imported.cleanup?.(namespace);
  }
}

/**
 * Registers the clean-shutdown tests of a backend: each starts a real
 * worker process (on the runtime running the tests) whose federation is
 * closed by `closeOnSignals()` and which disposes of its engines after
 * `startQueue()` resolves, gives it a task, sends it `SIGTERM` and asserts
 * that it exits by itself with code 0 within its grace plus a generous
 * margin: with a task that finishes within the grace (it completes, and
 * the process does not wait the grace out), with a task that waits for
 * its signal (aborted at the end of the grace; on a durable backend a
 * second worker then runs it), with such a task and a second `SIGTERM`
 * (aborted at once), and with nothing to do; and that a process that
 * only enqueues (a web process) exits with no signal once it disposed of
 * its engines.
 * @param options The backend's name, module and durability.
 * @since 0.4.0
 */
export function testGracefulShutdown(options: GracefulShutdownConformanceOptions): void {
  test(`${options.name}: a SIGTERMed worker lets its running task finish and exits by itself`, () =>
    withNamespace(options, async (namespace, workers) => {
      const worker = startWorker(options, namespace, "finish-in-grace", LONG_GRACE_MS, true);
      workers.push(worker);
      const started = await worker.waitFor(
        /^STARTED /,
        "the task to start",
        CHILD_START_TIMEOUT_MS,
      );
      const id = started.slice("STARTED ".length);
      const elapsed = await terminateAndExit(worker, LONG_GRACE_MS + EXIT_MARGIN_MS);
      assert(
        worker.lines.includes(`COMPLETED ${id}`),
        `the task did not complete; ${worker.output()}`,
      );
      assert(!worker.lines.some((line) => line.startsWith("ABORTED")), worker.output());
      // The process ends when its task does, not when the grace would.
      assert(elapsed < LONG_GRACE_MS, `the worker took ${elapsed} ms to exit`);
    }));

  test(
    `${options.name}: a SIGTERMed worker aborts a task still running after its grace and exits ` +
      `by itself${options.durable ? "; another worker runs the task again" : ""}`,
    () =>
      withNamespace(options, async (namespace, workers) => {
        const first = startWorker(options, namespace, "hold", SHORT_GRACE_MS, true);
        workers.push(first);
        const started = await first.waitFor(
          /^STARTED /,
          "the task to start",
          CHILD_START_TIMEOUT_MS,
        );
        const id = started.slice("STARTED ".length);
        const elapsed = await terminateAndExit(first, SHORT_GRACE_MS + EXIT_MARGIN_MS);
        assert(
          first.lines.includes(`ABORTED ${id}`),
          `the task was not aborted; ${first.output()}`,
        );
        // Its signal aborted only at the end of the grace.
        assert(elapsed >= SHORT_GRACE_MS, `the worker exited ${elapsed} ms after SIGTERM`);
        if (!options.durable) return;
        const second = startWorker(options, namespace, "finish", SHORT_GRACE_MS, false);
        workers.push(second);
        await second.waitFor(
          new RegExp(`^COMPLETED ${id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`),
          "the second worker to run the aborted task",
          CHILD_START_TIMEOUT_MS + RERUN_TIMEOUT_MS,
        );
        await terminateAndExit(second, SHORT_GRACE_MS + EXIT_MARGIN_MS);
      }),
  );

  test(`${options.name}: a second SIGTERM aborts the running task at once, and the worker exits`, () =>
    withNamespace(options, async (namespace, workers) => {
      const worker = startWorker(options, namespace, "hold", LONG_GRACE_MS, true);
      workers.push(worker);
      const started = await worker.waitFor(
        /^STARTED /,
        "the task to start",
        CHILD_START_TIMEOUT_MS,
      );
      const id = started.slice("STARTED ".length);
      worker.terminate();
      await worker.waitFor(/^TERMINATED$/, "the worker to take the first SIGTERM", EXIT_MARGIN_MS);
      const elapsed = await terminateAndExit(worker, LONG_GRACE_MS + EXIT_MARGIN_MS);
      assert(
        worker.lines.includes(`ABORTED ${id}`),
        `the task was not aborted; ${worker.output()}`,
      );
      // The second signal ended the grace: the process did not wait it out.
      assert(elapsed < LONG_GRACE_MS, `the worker took ${elapsed} ms to exit`);
    }));

  test(`${options.name}: a process that only enqueues exits by itself once it disposed of its engines`, () =>
    withNamespace(options, async (namespace, workers) => {
      const web = startWorker(options, namespace, "enqueue-only", SHORT_GRACE_MS, false);
      workers.push(web);
      const { code, signal } = await within(
        web.exited,
        () => `the process to exit by itself; ${web.output()}`,
        CHILD_START_TIMEOUT_MS,
      );
      assertEquals({ code, signal }, { code: 0, signal: null }, web.output());
      assert(web.lines.includes("ENQUEUED") && web.lines.includes("DISPOSED"), web.output());
    }));

  test(`${options.name}: a worker with nothing to do exits at once on SIGTERM`, () =>
    withNamespace(options, async (namespace, workers) => {
      const worker = startWorker(options, namespace, "finish", LONG_GRACE_MS, false);
      workers.push(worker);
      await worker.waitFor(/^READY$/, "the worker to listen", CHILD_START_TIMEOUT_MS);
      const elapsed = await terminateAndExit(worker, LONG_GRACE_MS + EXIT_MARGIN_MS);
      assert(elapsed < LONG_GRACE_MS, `the worker took ${elapsed} ms to exit`);
      if (worker.lines.some((line) => line.startsWith("STARTED"))) fail(worker.output());
    }));
}
