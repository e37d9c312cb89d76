// The pause conformance tests: two real worker processes (pause-worker.ts)
// on the backend's engines, and this process as the operator, which
// pauses and resumes through its own federation.  A paused task stays
// queued while the workers run other tasks, stays paused when both
// workers are replaced by new ones, and runs (every message once, as its
// first attempt) after resume; a paused outbox role holds deliveries to a
// loopback server until it is resumed.
import { buildPauseApp, type PauseApp, type PauseBackend } from "./pause-app.ts";
import { startSuiteWorker, stopByStdin } from "./suite-worker.ts";
import { startTestServer } from "./http-server.ts";
import { createTestNamespace } from "./namespace.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { waitUntil, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine; these only bound how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
// A held message is looked at again every few seconds; a resume reaches
// every worker at once over the pub/sub, or at its next refresh.
const RUN_TIMEOUT_MS = 60_000;
const PAUSED_TASKS = 10;

/**
 * Options for {@link testPauseAndResume}.
 * @since 0.4.0
 */
export interface PauseConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the worker processes import (so it must not
   * register tests), exporting `open(namespace)`, which returns a
   * {@link PauseBackend} (or a promise of one) whose engines share their
   * data per namespace, and optionally `cleanup(namespace)`.  E.g.
   * `new URL("./testdata/pause-backend.ts", import.meta.url).href`.
   */
  readonly backendModule: string;
}

interface BackendModule {
  open(namespace: string): PauseBackend | Promise<PauseBackend>;
  cleanup?(namespace: string): Promise<void>;
}

interface Worker {
  readonly lines: string[];
  waitFor(pattern: RegExp, what: string, timeoutMs: number): Promise<string>;
  /** Closes its stdin and waits for it to stop. */
  stop(): Promise<void>;
  readonly output: () => string;
}

function startWorker(options: PauseConformanceOptions, namespace: string): Worker {
  const worker = startSuiteWorker(
    new URL("./pause-worker.ts", import.meta.url),
    [options.backendModule, namespace],
    { stdin: true },
  );
  return {
    lines: worker.lines,
    output: worker.output,
    waitFor: worker.waitFor,
    stop: () => stopByStdin(worker, 60_000),
  };
}

/** How many messages of a kind (a task's name, or a message type) the workers put back. */
function heldBy(workers: readonly Worker[], what: string): number {
  return workers.reduce(
    (sum, worker) =>
      sum + worker.lines.filter((line) => {
        const [word, type, taskName] = line.split(" ");
        return word === "HELD" && (type === what || taskName === what);
      }).length,
    0,
  );
}

/** The tasks the workers ran, as `[n, attempt]`. */
function ranBy(workers: readonly Worker[], task: string): [number, number][] {
  return workers.flatMap((worker) =>
    worker.lines.flatMap((line) => {
      const [word, name, n, attempt] = line.split(" ");
      return word === "RAN" && name === task
        ? [[Number(n), Number(attempt)] as [number, number]]
        : [];
    })
  );
}

async function withPauseApp(
  options: PauseConformanceOptions,
  body: (app: PauseApp, namespace: string, workers: Worker[]) => Promise<void>,
): Promise<void> {
  const namespace = createTestNamespace();
  const module = await import(options.backendModule) as BackendModule;
  const backend = await module.open(namespace);
  const workers: Worker[] = [];
  try {
    // This process only pauses, resumes and enqueues: no task runs here.
    const app = await buildPauseApp(backend, () => {
      throw new Error("The operator's federation ran a task.");
    });
    await body(app, namespace, workers);
  } finally {
    await Promise.allSettled(workers.map((worker) => worker.stop()));
    for (const engine of [backend.pubsub, backend.kv, backend.queue]) {
      await (engine as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
    }
    await module.cleanup?.(namespace);
  }
}

async function startWorkers(
  options: PauseConformanceOptions,
  namespace: string,
  workers: Worker[],
  count: number,
): Promise<Worker[]> {
  const started = Array.from({ length: count }, () => startWorker(options, namespace));
  workers.push(...started);
  await Promise.all(
    started.map((worker) =>
      worker.waitFor(/^READY$/, "the worker to listen", CHILD_START_TIMEOUT_MS)
    ),
  );
  return started;
}

/**
 * Registers the pause tests, each with two worker processes on the
 * backend: a paused task runs only after `resumeTask()` (every message
 * once, as its first attempt), also when the workers are restarted while
 * it is paused; a paused outbox role holds deliveries to a loopback server
 * until `resumeRole()`.
 * @param options The backend's name and its module.
 * @since 0.4.0
 */
export function testPauseAndResume(options: PauseConformanceOptions): void {
  test(`${options.name}: a paused task runs only after resume, across a restart`, async () => {
    await withPauseApp(options, async (app, namespace, workers) => {
      const { federation, importTask, otherTask } = app;
      const ctx = federation.createContext(new URL("https://pause.example/"), undefined);
      await federation.pauseTask(importTask);
      assertEquals(await federation.listPaused(), { tasks: ["import"], roles: [] });
      let first = await startWorkers(options, namespace, workers, 2);
      await ctx.enqueueTaskMany(
        importTask,
        Array.from({ length: PAUSED_TASKS }, (_, n) => ({ n })),
      );
      // The workers take every import and put it back; the other task,
      // enqueued after them, runs.
      await ctx.enqueueTask(otherTask, { n: 1 });
      await waitUntil(
        () => ranBy(first, "other").length === 1 && heldBy(first, "import") >= PAUSED_TASKS,
        {
          what: () => `the imports to be held; ${first.map((w) => w.output()).join("\n")}`,
          timeoutMs: RUN_TIMEOUT_MS,
        },
      );
      assertEquals(ranBy(first, "import"), []);

      // Both workers replaced: the new ones read the pause at start-up.
      await Promise.all(first.map((worker) => worker.stop()));
      assertEquals(ranBy(first, "import"), []);
      first = await startWorkers(options, namespace, workers, 2);
      await ctx.enqueueTask(otherTask, { n: 2 });
      await waitUntil(
        () => ranBy(first, "other").length === 1 && heldBy(first, "import") >= PAUSED_TASKS,
        {
          what: () =>
            `the imports to be held after the restart; ${first.map((w) => w.output()).join("\n")}`,
          timeoutMs: RUN_TIMEOUT_MS,
        },
      );
      assertEquals(ranBy(workers, "import"), []);
      assertEquals(await federation.listPaused(), { tasks: ["import"], roles: [] });

      await federation.resumeTask("import");
      assertEquals(await federation.listPaused(), { tasks: [], roles: [] });
      await waitUntil(() => ranBy(workers, "import").length >= PAUSED_TASKS, {
        what: () => `every import to run; ran ${JSON.stringify(ranBy(workers, "import"))}`,
        timeoutMs: RUN_TIMEOUT_MS,
      });
      const ran = ranBy(workers, "import");
      // Each once, and as its first attempt: holding spent no attempt.
      assertEquals(
        ran.map(([n]) => n).sort((a, b) => a - b),
        Array.from({ length: PAUSED_TASKS }, (_, n) => n),
      );
      assert(ran.every(([, attempt]) => attempt === 0), `attempts: ${JSON.stringify(ran)}`);
    });
  });

  test(`${options.name}: a paused outbox role holds deliveries until resumed`, async () => {
    const server = await startTestServer(() => new Response(null, { status: 202 }));
    try {
      await withPauseApp(options, async (app, namespace, workers) => {
        const { federation, otherTask } = app;
        const ctx = federation.createContext(new URL("https://pause.example/"), undefined);
        await federation.pauseRole("outbox");
        assertEquals(await federation.listPaused(), { tasks: [], roles: ["outbox"] });
        const started = await startWorkers(options, namespace, workers, 2);
        const { Create, Note } = await import("@fedify/vocab");
        const inboxes = [1, 2, 3].map((i) => ({
          id: new URL(`https://remote.example/users/u${i}`),
          inboxId: new URL(`/users/u${i}/inbox`, server.url),
        }));
        await ctx.sendActivity(
          { identifier: "alice" },
          inboxes,
          new Create({
            id: new URL("https://pause.example/activities/1"),
            actor: new URL("https://pause.example/users/alice"),
            object: new Note({ id: new URL("https://pause.example/notes/1"), content: "held" }),
          }),
        );
        await ctx.enqueueTask(otherTask, { n: 1 });
        await waitUntil(
          () => ranBy(started, "other").length === 1 && heldBy(started, "outbox") >= 3,
          {
            what: () => `the deliveries to be held; ${started.map((w) => w.output()).join("\n")}`,
            timeoutMs: RUN_TIMEOUT_MS,
          },
        );
        assertEquals(server.requests.length, 0, "no delivery while the outbox is paused");
        await federation.resumeRole("outbox");
        await within(server.waitForRequests(3), "the held deliveries", RUN_TIMEOUT_MS);
        assertEquals(
          server.requests.map((request) => new URL(request.url).pathname).sort(),
          ["/users/u1/inbox", "/users/u2/inbox", "/users/u3/inbox"],
        );
      });
    } finally {
      await server.close();
    }
  });

  test(`${options.name}: pausing checks its argument`, async () => {
    await withPauseApp(options, async ({ federation }) => {
      for (
        const call of [
          () => federation.pauseTask(""),
          () => federation.resumeTask({} as { name: string }),
          () => federation.pauseRole("web" as "inbox"),
        ]
      ) {
        let error: unknown;
        try {
          await call();
        } catch (thrown) {
          error = thrown;
        }
        assert(error instanceof TypeError, `expected a TypeError, got ${error}`);
      }
      assertEquals(await federation.listPaused(), { tasks: [], roles: [] });
    });
  });
}
