// The durable-steps conformance tests: a real worker process
// (durable-steps-worker.ts) runs a task of steps a, b, sleep s, wait e and
// c on the backend's engines and SIGKILLs itself between two steps or
// inside one; a second worker takes over once the queue's lease ends.  This
// process is the other one: it enqueues, and sends the event the task
// waits for.  Each completed step's side effect must have happened once,
// and the task must finish.
import { startSuiteWorker } from "./suite-worker.ts";
import {
  buildDurableStepsApp,
  type DurableStepsApp,
  type DurableStepsBackend,
} from "./durable-steps-app.ts";
import { createTestNamespace } from "./namespace.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { waitUntil, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; these only bound how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
// A killed worker's message comes back when its lease ends, then runs
// through a sleep and a wait.
const RUN_TIMEOUT_MS = 90_000;

/**
 * Options for {@link testDurableSteps}.
 * @since 0.4.0
 */
export interface DurableStepsConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the worker processes import (so it must not
   * register tests), exporting `open(namespace)`, which returns a
   * {@link DurableStepsBackend} (or a promise of one) whose engines share
   * their data per namespace, its queue with a lease of a few seconds, and
   * optionally `cleanup(namespace)`.
   */
  readonly backendModule: string;
}

interface BackendModule {
  open(namespace: string): DurableStepsBackend | Promise<DurableStepsBackend>;
  cleanup?(namespace: string): Promise<void>;
}

/** The app, with the store its records are in. */
interface TestApp extends DurableStepsApp {
  readonly kv: DurableStepsBackend["kv"];
}

interface Worker {
  readonly lines: string[];
  waitFor(pattern: RegExp, what: string, timeoutMs: number): Promise<string>;
  /** Resolves with the exit code (`null` when killed by a signal). */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
  readonly output: () => string;
}

function startWorker(
  options: DurableStepsConformanceOptions,
  namespace: string,
  killPoint: "in-b" | "after-b" | "none",
): Worker {
  const worker = startSuiteWorker(
    new URL("./durable-steps-worker.ts", import.meta.url),
    [options.backendModule, namespace, killPoint],
    { stdin: true },
  );
  return {
    lines: worker.lines,
    output: worker.output,
    exited: worker.exited.then(({ code }) => code),
    waitFor: worker.waitFor,
    async stop() {
      if (!worker.running) return;
      worker.closeStdin();
      await within(worker.exited, () => `the worker to stop; ${worker.output()}`, 60_000)
        .catch(async (error) => {
          await worker.kill(5_000);
          throw error;
        });
    },
  };
}

/** The lines of the workers that start with `word`, e.g. every `EFFECT` line. */
function linesOf(workers: readonly Worker[], word: string): string[] {
  return workers.flatMap((worker) => worker.lines.filter((line) => line.startsWith(`${word} `)));
}

async function withDurableStepsApp(
  options: DurableStepsConformanceOptions,
  body: (app: TestApp, namespace: string, workers: Worker[]) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const module = await import(options.backendModule) as BackendModule;
  const backend = await module.open(namespace);
  const workers: Worker[] = [];
  try {
    // This process only enqueues and sends events: no step runs here.
    const refuse = () => Promise.reject(new Error("The test's own federation ran a step."));
    const app = await buildDurableStepsApp(backend, {
      started: refuse,
      effect: refuse,
      between: refuse,
    });
    await body({ ...app, kv: backend.kv }, namespace, workers);
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    for (const engine of [backend.pubsub, backend.kv, backend.queue]) {
      await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
    }
    await module.cleanup?.(namespace);
  }
}

/**
 * Runs the scenario: a first worker that dies at `killPoint`, a second
 * that takes over; resolves with both workers and the task's id once the
 * task is waiting for its event (or has ended, for a short timeout).
 */
async function runUntilKilled(
  options: DurableStepsConformanceOptions,
  app: DurableStepsApp,
  namespace: string,
  workers: Worker[],
  killPoint: "in-b" | "after-b",
  payload: { readonly key: string; readonly timeoutMs: number },
): Promise<{ readonly id: string; readonly second: Worker }> {
  const first = startWorker(options, namespace, killPoint);
  workers.push(first);
  await first.waitFor(/^READY$/, "the first worker to listen", CHILD_START_TIMEOUT_MS);
  const ctx = app.federation.createContext(new URL("https://steps.example/"), undefined);
  const enqueued = await ctx.enqueueTask(app.flow, { ...payload, sleepMs: 1000 });
  assert(enqueued.status === "enqueued", "the task is enqueued");
  await first.waitFor(
    new RegExp(`^KILLED ${killPoint}$`),
    "the worker to kill itself",
    RUN_TIMEOUT_MS,
  );
  assertEquals(await within(first.exited, "the killed worker to exit", 30_000), null);
  const second = startWorker(options, namespace, "none");
  workers.push(second);
  await second.waitFor(/^READY$/, "the second worker to listen", CHILD_START_TIMEOUT_MS);
  return { id: enqueued.messageId, second };
}

/** Waits for the task to end and returns its status. */
async function finished(app: DurableStepsApp, id: string, workers: readonly Worker[]) {
  let state: string | undefined;
  await waitUntil(async () => {
    const status = await app.federation.getTaskStatus(id);
    state = status?.state;
    return state === "completed" || state === "failed" || state === "cancelled";
  }, {
    what: () => `the task to end; last ${state}; ${workers.map((w) => w.output()).join("\n")}`,
    timeoutMs: RUN_TIMEOUT_MS,
  });
  return (await app.federation.getTaskStatus(app.flow, id))!;
}

/**
 * Registers the durable-steps tests on a backend: a task of steps a, b,
 * a 1-second sleep, a wait for an event and c, whose worker process is
 * SIGKILLed right after step b (and, in the second test, inside step b,
 * before its side effect) and replaced by a new one.  Steps a and b do
 * their side effects once, c once, the task completes; an event sent from
 * this process (another one than the worker) ends the wait with its data,
 * and with none sent the wait times out to `null`.  The step records are
 * gone after the task completed.
 * @param options The backend's name and its module.
 * @since 0.4.0
 */
export function testDurableSteps(options: DurableStepsConformanceOptions): void {
  test(`${options.name}: a worker killed right after step b resumes; an event from another process ends the wait`, async () => {
    await withDurableStepsApp(options, async (app, namespace, workers) => {
      const key = `key-${crypto.randomUUID()}`;
      const { id, second } = await runUntilKilled(options, app, namespace, workers, "after-b", {
        key,
        timeoutMs: 120_000,
      });
      // The second worker slept, and the task now waits for its event: its
      // status shows the step it is at.
      await second.waitFor(/^BETWEEN s$/, "the sleep to end", RUN_TIMEOUT_MS);
      await waitUntil(async () => {
        const steps = (await app.federation.getTaskStatus(id))?.steps;
        return steps?.current?.id === "e" && steps.current.phase === "waiting";
      }, { what: "the task to wait for its event", timeoutMs: RUN_TIMEOUT_MS });
      const sent = await app.federation.sendEvent("durable-go", { key, data: { word: "go" } });
      assertEquals(sent.resumed, 1, "the waiting task was woken");
      const status = await finished(app, id, workers);
      assertEquals(status.state, "completed", second.output());
      assertEquals(status.result, { event: "go" });
      assertEquals(status.steps, { recorded: ["a", "b", "s", "e", "c"], recordedCount: 5 });
      // The worker printed its last line before the task completed, but
      // this process may read the pipe after it sees the status.
      await second.waitFor(/^EFFECT c /, "the last step's side effect line", RUN_TIMEOUT_MS);
      assertEquals(linesOf(workers, "EFFECT"), ["EFFECT a", "EFFECT b", "EFFECT c go true"]);
      assertEquals(linesOf(workers, "STARTED"), ["STARTED a", "STARTED b", "STARTED c"]);
      // Where Fedwork keeps a task's step records (internal; checked here
      // because deleting them after the task ended is a promise).
      await waitUntil(
        async () => await app.kv.get(["fedwork", "steps", "state", id]) === undefined,
        { what: "the step records to be deleted", timeoutMs: RUN_TIMEOUT_MS },
      );
    });
  });

  test(`${options.name}: a worker killed inside step b runs it again; the wait times out to null`, async () => {
    await withDurableStepsApp(options, async (app, namespace, workers) => {
      const { id, second } = await runUntilKilled(options, app, namespace, workers, "in-b", {
        key: `key-${crypto.randomUUID()}`,
        timeoutMs: 1500,
      });
      const status = await finished(app, id, workers);
      assertEquals(status.state, "completed", second.output());
      assertEquals(status.result, { event: null });
      await second.waitFor(/^EFFECT c /, "the last step's side effect line", RUN_TIMEOUT_MS);
      // b started twice (the first time the worker died in it) but did
      // its side effect once.
      assertEquals(linesOf(workers, "STARTED"), [
        "STARTED a",
        "STARTED b",
        "STARTED b",
        "STARTED c",
      ]);
      assertEquals(linesOf(workers, "EFFECT"), ["EFFECT a", "EFFECT b", "EFFECT c null true"]);
    });
  });
}
