// The worker and machine id tests: two real worker processes on one
// engine, each with its own machineId; listWorkers() groups them by
// machine, and the task updates and webhook payloads of the tasks each
// ran carry its worker and machine.
import {
  createFederation,
  groupWorkersByMachine,
  type TaskUpdate,
  verifyWebhookRequest,
  type WebhookPayload,
} from "@fedwork/core";
import { numberSchema } from "./backend-set.ts";
import { startSuiteWorker } from "./suite-worker.ts";
import { startTestServer } from "./http-server.ts";
import { MACHINES_RELEASE_KEY, MACHINES_TASK_NAME } from "./machines-task.ts";
import { createTestNamespace } from "./namespace.ts";
import type { ShutdownBackend } from "./shutdown-suite.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { deferred, waitUntil, within } from "./wait.ts";

// Starting a runtime and connecting to an engine can be slow on a busy
// machine: these only bound how long a broken setup takes to fail.
const CHILD_START_TIMEOUT_MS = 90_000;
const TIMEOUT_MS = 60_000;
const SECRET = "machines-suite-secret-0123456789";

/**
 * Options for {@link testWorkerMachines}.
 * @since 0.4.0
 */
export interface WorkerMachinesConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * The URL of a module the worker processes and the test import (so it
   * must not register tests), exporting `open(namespace)`, which returns a
   * {@link ShutdownBackend} with a `pubsub` whose engines share their data
   * per namespace, and whose queue runs one message at a time; optionally
   * `cleanup(namespace)`.
   */
  readonly backendModule: string;
}

interface WorkerProcess {
  waitFor(pattern: RegExp, what: string): Promise<RegExpMatchArray>;
  output(): string;
  stop(): Promise<void>;
}

function startWorkerProcess(
  backendModule: string,
  namespace: string,
  machineId: string,
): WorkerProcess {
  const worker = startSuiteWorker(
    new URL("./machines-worker.ts", import.meta.url),
    [backendModule, namespace, machineId],
    { label: machineId },
  );
  return {
    output: worker.output,
    async waitFor(pattern, what) {
      const line = await worker.waitFor(pattern, what, CHILD_START_TIMEOUT_MS);
      return line.match(pattern)!;
    },
    async stop() {
      if (!worker.running) return;
      worker.signal("SIGTERM");
      const stopped = await within(worker.exited, "the worker to stop", 30_000).then(
        () => true,
        () => false,
      );
      if (!stopped) await worker.kill(30_000);
    },
  };
}

/**
 * Registers the worker and machine id test of a backend: two real worker
 * processes (on the runtime running the tests) with the machine ids
 * `machine-a` and `machine-b` run one task each (each runs one message at
 * a time, and the first task holds its worker until released), while the
 * test process, on its own clients of the engines:
 *
 * - sees both workers in `listWorkers()`, each with its `machineId`, and
 *   `groupWorkersByMachine()` gives one machine per process;
 * - sees in `watchTasks()` the `running`, progress and `completed`
 *   updates of each task carry the id of the worker that ran it and its
 *   machine, the two tasks on the two machines, and so do the records
 *   `getTaskStatus()` reads;
 * - receives on a real HTTP server on loopback the signed `progress` and
 *   `completed` webhook payloads of both tasks, each with the same
 *   `workerId` and `machineId`.
 * @param options The backend's name and module.
 * @since 0.4.0
 */
export function testWorkerMachines(options: WorkerMachinesConformanceOptions): void {
  test(`${options.name}: two worker processes report their machine in listWorkers(), task updates and webhooks`, async () => {
    const namespace = createTestNamespace();
    const imported = await import(options.backendModule) as {
      open(namespace: string): ShutdownBackend | Promise<ShutdownBackend>;
      cleanup?: (namespace: string) => Promise<void>;
    };
    const backend = await imported.open(namespace);
    if (backend.pubsub == null) {
      throw new TypeError("testWorkerMachines() needs open() to return a pubsub.");
    }
    const received: WebhookPayload[] = [];
    const refused: string[] = [];
    const server = await startTestServer(async (request) => {
      try {
        received.push(await verifyWebhookRequest(request, { secret: SECRET }));
        return new Response(null, { status: 204 });
      } catch (error) {
        refused.push(String(error));
        return new Response(null, { status: 401 });
      }
    });
    const workers: WorkerProcess[] = [];
    const watching = new AbortController();
    let watch: Promise<void> | undefined;
    try {
      const federation = createFederation<void>({
        kv: backend.kv,
        queue: backend.queue,
        pubsub: backend.pubsub,
        manuallyStartQueue: true,
      });
      const task = federation.defineTask(MACHINES_TASK_NAME, {
        schema: numberSchema,
        handler() {},
      });
      // Before the workers start, so that no worker caches an empty list.
      await federation.addWebhook({
        url: new URL("/hooks", server.url),
        events: ["progress", "completed"],
        tasks: [MACHINES_TASK_NAME],
        secret: SECRET,
      });
      const updates: TaskUpdate[] = [];
      const subscribed = deferred();
      watch = (async () => {
        const iterable = federation.watchTasks({ signal: watching.signal });
        const iterator = iterable[Symbol.asyncIterator]();
        // The subscription is made on the first next().
        const first = iterator.next();
        subscribed.resolve();
        let step = await first;
        while (!step.done) {
          updates.push(step.value);
          step = await iterator.next();
        }
      })();
      await subscribed.promise;
      for (const machineId of ["machine-a", "machine-b"]) {
        workers.push(startWorkerProcess(options.backendModule, namespace, machineId));
      }
      const ready = await Promise.all(
        workers.map((worker) => worker.waitFor(/^READY (\S+) (\S+)$/, "READY")),
      );
      const workerIds = new Map(ready.map((match) => [match[1], match[2]]));
      assertEquals([...workerIds.values()].sort(), ["machine-a", "machine-b"]);

      // listWorkers() sees both, each on its machine.
      await waitUntil(async () => (await federation.listWorkers()).length === 2, {
        what: "both workers to be listed",
        timeoutMs: TIMEOUT_MS,
      });
      const listed = await federation.listWorkers();
      for (const worker of listed) assertEquals(worker.machineId, workerIds.get(worker.id));
      const machines = groupWorkersByMachine(listed);
      assertEquals(machines.map((machine) => machine.machineId), ["machine-a", "machine-b"]);
      for (const machine of machines) {
        assertEquals(machine.workers.map((worker) => worker.machineId), [machine.machineId]);
        assertEquals(machine.states.idle + machine.states.busy, 1);
      }

      // Two tasks: the first holds its worker, so the other worker runs the second.
      const ctx = federation.createContext(new URL("https://machines.example/"), undefined);
      const results = await ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
      const ids = results.map((result) => {
        assert(result.status === "enqueued");
        return result.messageId;
      });
      const updatesOf = (id: string) => updates.filter((update) => update.id === id);
      await waitUntil(
        () =>
          ids.every((id) => updatesOf(id).some((update) => update.status.progress?.percent === 50)),
        {
          what: () => `both tasks to report progress (${JSON.stringify(updates)})`,
          timeoutMs: TIMEOUT_MS,
        },
      );
      await backend.kv.set(MACHINES_RELEASE_KEY, true);
      await waitUntil(
        () =>
          ids.every((id) => updatesOf(id).some((update) => update.status.state === "completed")),
        {
          what: () => `both tasks to complete (${JSON.stringify(updates)})`,
          timeoutMs: TIMEOUT_MS,
        },
      );
      const ranOn = new Map<string, string>();
      for (const id of ids) {
        const seen = updatesOf(id).filter((update) => update.status.state !== "queued");
        const workerId = seen[0]?.status.workerId;
        assert(workerId != null && workerIds.has(workerId), `task ${id}: ${JSON.stringify(seen)}`);
        for (const update of seen) {
          assertEquals(
            [update.status.workerId, update.status.machineId],
            [workerId, workerIds.get(workerId)],
            `every update of task ${id} names its worker`,
          );
        }
        assert(seen.some((update) => update.kind === "progress"));
        assert(seen.some((update) => update.status.state === "running"));
        ranOn.set(id, workerId);
        const status = await federation.getTaskStatus(id);
        assertEquals([status?.state, status?.workerId, status?.machineId], [
          "completed",
          workerId,
          workerIds.get(workerId),
        ]);
      }
      // One task on each machine.
      assertEquals([...ranOn.values()].map((id) => workerIds.get(id)).sort(), [
        "machine-a",
        "machine-b",
      ]);

      // The webhooks: a progress and a completed event per task.
      await waitUntil(() => received.length >= 4 || refused.length > 0, {
        what: () => `four webhook requests (got ${JSON.stringify(received)})`,
        timeoutMs: TIMEOUT_MS,
      });
      assertEquals(refused, []);
      for (const id of ids) {
        const events = received.filter((payload) => payload.task.id === id);
        assertEquals(events.map((payload) => payload.type).sort(), ["completed", "progress"]);
        const workerId = ranOn.get(id)!;
        for (const payload of events) {
          assertEquals([payload.task.workerId, payload.task.machineId], [
            workerId,
            workerIds.get(workerId),
          ]);
        }
      }
    } finally {
      watching.abort();
      await watch?.catch(() => {});
      await Promise.all(workers.map((worker) => worker.stop()));
      await server.close();
      for (const engine of [backend.pubsub, backend.kv, backend.queue]) {
        await (engine as Partial<AsyncDisposable> | undefined)?.[Symbol.asyncDispose]?.();
      }
      await imported.cleanup?.(namespace);
    }
  });
}
