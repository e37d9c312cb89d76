import process from "node:process";
import {
  createFederation,
  type Federation,
  InProcessMessageQueue,
  type KvKey,
  type KvStore,
  type KvStoreListEntry,
  type KvStoreSetOptions,
  type MessageQueue,
  ParallelMessageQueue,
  PermanentError,
  type WorkerEvent,
  type WorkerInfo,
} from "@fedwork/core";
import type { FailedDeliveryConformanceOptions } from "./failed-delivery-suite.ts";
import { passThrough, withStore } from "./store-suite.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { deferred, waitUntil, within } from "./wait.ts";

/**
 * Options for {@link testWorkerPresence}: the store's name and how to open
 * it, like `testFailedDeliveries()`'s.  `open()` is called more than once
 * per test with the same namespace (one call per process), and each call
 * must reach the same data (for an in-memory store, return the same
 * instance for a namespace).
 * @since 0.3.0
 */
export interface WorkerPresenceConformanceOptions extends FailedDeliveryConformanceOptions {
  /**
   * Opens the backend's message queue with the given `concurrency`
   * option, for the test that `listWorkers()` shows it.  Without it that
   * test is not registered.  The queue is disposed of (if it is
   * `AsyncDisposable`) before `cleanup()` runs.
   * @param namespace The test's namespace; the queue must not clash with
   *                  the store opened on it.
   * @param options The queue's `concurrency` option.
   */
  openQueue?(
    namespace: string,
    options: { readonly concurrency: number },
  ): MessageQueue | Promise<MessageQueue>;
}

const base = new URL("https://app.example/");
const heartbeatInterval = { milliseconds: 100 };
/**
 * Presence for the tests that read states other than `offline`: a worker
 * is shown offline only after 10 s without a heartbeat, so that a busy
 * machine delaying a timer never makes it look offline.
 */
const presence = { heartbeatInterval, offlineAfterMissedHeartbeats: 100 };

function federationOn(kv: KvStore, queue: MessageQueue): Federation<void> {
  return createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    taskRetryPolicy: () => null,
  });
}

/** A worker started on a federation, and how to stop it. */
interface RunningWorker {
  readonly events: WorkerEvent[];
  readonly ready: Promise<WorkerEvent>;
  stop(): Promise<void>;
}

function startWorker(
  federation: Federation<void>,
  options: Parameters<Federation<void>["startQueue"]>[1] = {},
): RunningWorker {
  const controller = new AbortController();
  const events: WorkerEvent[] = [];
  const ready = deferred<WorkerEvent>();
  const running = federation.startQueue(undefined, {
    ...options,
    signal: controller.signal,
    onWorkerEvent: (event) => {
      events.push(event);
      if (event.type === "ready") ready.resolve(event);
    },
  });
  let stopped: Promise<void> | undefined;
  return {
    events,
    ready: within(ready.promise, "the worker to be ready"),
    stop() {
      controller.abort();
      return stopped ??= within(running, "the worker to stop");
    },
  };
}

/** A worker by id, or a failure naming who is listed. */
function find(workers: readonly WorkerInfo[], id: string): WorkerInfo {
  const worker = workers.find((listed) => listed.id === id);
  assert(worker != null, `worker ${id} is listed; got ${workers.map((w) => w.id).join(", ")}`);
  return worker;
}

/**
 * A store that passes everything to the real one, except that it can stop
 * the worker records' writes: a worker that hangs or lost the store, which
 * a real engine cannot be made to be on demand.  The records already
 * written stay in the real store and expire there.
 */
class WorkerWriteBlocker implements KvStore {
  readonly #kv: KvStore;
  blocked = false;
  constructor(kv: KvStore) {
    this.#kv = kv;
  }
  get<T = unknown>(key: KvKey): Promise<T | undefined> {
    return this.#kv.get<T>(key);
  }
  set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    if (this.blocked && key[0] === "fedwork" && key[1] === "worker") {
      return Promise.reject(new Error("the store is unreachable"));
    }
    return this.#kv.set(key, value, options);
  }
  delete(key: KvKey): Promise<void> {
    return this.#kv.delete(key);
  }
  list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    return this.#kv.list(prefix);
  }
}

/**
 * Registers the tests of worker presence over a key–value store, with two
 * federations on it standing in for two processes: each sees the other's
 * worker with its identity (host, pid, runtime), queues and their
 * concurrency, capabilities, state (idle, busy with its task ids), counts
 * and advancing heartbeats; a stopped worker is removed at once, and one
 * whose heartbeats stop is shown offline, reported by an `error` event,
 * and expires from the store after `removeAfter`.  With `openQueue`, also
 * that a worker on the backend's queue shows the queue's `concurrency`.
 * @param options The store's name and how to open it (and its queue).
 * @since 0.3.0
 */
export function testWorkerPresence(options: WorkerPresenceConformanceOptions): void {
  test(`${options.name}: two processes on one store list each other's workers, busy, idle and stopped`, () =>
    withStore(options, async (open) => {
      await using queueA = new InProcessMessageQueue();
      await using innerB = new InProcessMessageQueue();
      const a = federationOn(await open(), queueA);
      const b = federationOn(await open(), new ParallelMessageQueue(innerB, 3));
      const started = deferred();
      const release = deferred();
      const slow = b.defineTask("slow", {
        schema: passThrough<{ n: number }>(),
        async handler() {
          started.resolve();
          await release.promise;
        },
      });
      const fail = b.defineTask("fail", {
        schema: passThrough<{ n: number }>(),
        handler() {
          throw new PermanentError("no");
        },
      });
      const workerA = startWorker(a, { capabilities: ["gpu"], presence });
      const workerB = startWorker(b, { presence });
      try {
        const idA = (await workerA.ready).worker.id;
        const idB = (await workerB.ready).worker.id;
        for (const federation of [a, b]) {
          await waitUntil(async () => (await federation.listWorkers()).length === 2, {
            what: "both workers to be listed",
          });
        }
        const listedA = find(await b.listWorkers(), idA);
        const listedB = find(await a.listWorkers(), idB);
        for (const listed of [listedA, listedB]) {
          assertEquals([listed.pid, listed.heartbeatIntervalMs, listed.state], [
            process.pid,
            100,
            "idle",
          ]);
          assert(listed.host !== "" && listed.runtime !== "", "host and runtime are set");
          // Since 0.4.0; no machineId was given.
          assertEquals(listed.machineId, listed.host, "the machine defaults to the host name");
          assert(listed.queues.length >= 1, "the queues are listed");
        }
        assertEquals([listedA.capabilities, listedB.capabilities], [["gpu"], []]);
        assertEquals(
          [...new Set(listedA.queues.map((queue) => `${queue.type} ${queue.concurrency}`))],
          ["InProcessMessageQueue 1"],
        );
        assertEquals(
          [...new Set(listedB.queues.map((queue) => `${queue.type} ${queue.concurrency}`))],
          ["ParallelMessageQueue 3"],
        );

        const ctx = b.createContext(base, undefined);
        const result = await ctx.enqueueTask(slow, { n: 1 });
        const slowId = result.status === "enqueued" ? result.messageId : "";
        await within(started.promise, "the slow task to start");
        await waitUntil(async () => find(await a.listWorkers(), idB).state === "busy", {
          what: "the other process to see the worker busy",
        });
        assertEquals(find(await a.listWorkers(), idB).currentTaskIds, [slowId]);
        assertEquals(find(await a.listWorkers(), idA).state, "idle");
        const beat = find(await a.listWorkers(), idB).lastHeartbeatAt.getTime();
        await waitUntil(
          async () => find(await a.listWorkers(), idB).lastHeartbeatAt.getTime() > beat,
          { what: "a later heartbeat" },
        );
        release.resolve();
        await ctx.enqueueTask(fail, { n: 2 });
        await waitUntil(
          async () => {
            const listed = find(await a.listWorkers(), idB);
            return listed.state === "idle" && listed.counts.failed === 1;
          },
          { what: "the worker to show idle with one completed and one failed" },
        );
        const idle = find(await a.listWorkers(), idB);
        assertEquals(idle.counts, {
          completed: 1,
          retried: 0,
          failed: 1,
          dropped: 0,
          cancelled: 0,
        });
        assertEquals(idle.currentTaskIds, []);

        await workerB.stop();
        assertEquals(workerB.events.map((event) => event.type), ["ready", "stopping"]);
        assertEquals(workerB.events[1].worker.state, "stopping");
        assertEquals(
          (await a.listWorkers()).map((worker) => worker.id),
          [idA],
          "a stopped worker is removed at once",
        );
      } finally {
        release.resolve();
        await workerB.stop();
        await workerA.stop();
      }
    }));

  test(`${options.name}: a worker whose heartbeats stop is shown offline elsewhere, then expires`, () =>
    withStore(options, async (open) => {
      await using queue = new InProcessMessageQueue();
      const blocker = new WorkerWriteBlocker(await open());
      const stuck = federationOn(blocker, queue);
      const observer = federationOn(await open(), queue);
      const worker = startWorker(stuck, {
        presence: {
          heartbeatInterval,
          offlineAfterMissedHeartbeats: 2,
          removeAfter: { seconds: 2 },
        },
      });
      try {
        const id = (await worker.ready).worker.id;
        await waitUntil(async () => (await observer.listWorkers())[0]?.id === id, {
          what: "the worker to be listed",
        });
        blocker.blocked = true;
        await waitUntil(async () => (await observer.listWorkers())[0]?.state === "offline", {
          what: "the worker to show offline",
          intervalMs: 50,
        });
        await waitUntil(async () => (await observer.listWorkers()).length === 0, {
          what: "the offline worker's record to expire",
        });
        const errors = worker.events.filter((event) => event.type === "error");
        assert(errors.length > 0, "the failed heartbeats were reported as error events");
        assertEquals((errors[0].error as Error).message, "the store is unreachable");
      } finally {
        await worker.stop();
      }
    }));

  const { openQueue } = options;
  if (openQueue == null) return;
  test(`${options.name}: listWorkers shows the concurrency option of the backend's queue`, () =>
    withStore(options, async (open, namespace) => {
      const queue = await openQueue(namespace, { concurrency: 3 });
      try {
        const federation = federationOn(await open(), queue);
        const worker = startWorker(federation, { presence });
        try {
          const id = (await worker.ready).worker.id;
          const listed = find(await federation.listWorkers(), id);
          assertEquals(
            [...new Set(listed.queues.map((queue) => `${queue.type} ${queue.concurrency}`))],
            [`${queue.constructor.name} 3`],
          );
        } finally {
          await worker.stop();
        }
      } finally {
        await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
      }
    }));
}
