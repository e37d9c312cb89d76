// Task cancellation and per-task capabilities across stand-in processes:
// run by testTaskProgressAndRouting() for every backend.
import {
  createFederation,
  type Federation,
  type MessageCancelledEvent,
  millisecondsToDuration,
  TaskCancelledError,
  type TaskUpdate,
} from "@fedwork/core";
import type {
  ProgressRoutingBackend,
  ProgressRoutingConformanceOptions,
} from "./progress-routing-suite.ts";
import { numberSchema, SUITE_TIMEOUT_MS, withBackends } from "./backend-set.ts";
import { assert, assertEquals, assertInstanceOf, test } from "./test-runner.ts";
import { deferred, waitUntil, within } from "./wait.ts";

const TIMEOUT_MS = SUITE_TIMEOUT_MS;

function federationOf(backend: ProgressRoutingBackend): Federation<void> {
  return createFederation<void>({
    kv: backend.kv,
    queue: backend.queue,
    ...(backend.pubsub == null ? {} : { pubsub: backend.pubsub }),
    manuallyStartQueue: true,
  });
}

/**
 * Registers the cancellation tests (they need `pubsub` from `open()`):
 * a queued task cancelled on one federation is never run by the other's
 * worker; a running task cancelled on one federation has its signal
 * aborted on the other's worker and ends `cancelled`, without a retry,
 * whether its handler throws or ignores the signal and returns; cancelling
 * a finished or unknown task does nothing and says so.
 * @param options The backend's name and how to open it.
 * @since 0.3.0
 */
export function testTaskCancellation(options: ProgressRoutingConformanceOptions): void {
  test(`${options.name}: a cancelled queued task is never run`, async () => {
    await withBackends(options, 2, async ([workerBackend, callerBackend]) => {
      const worker = federationOf(workerBackend);
      const caller = federationOf(callerBackend);
      const ran: number[] = [];
      const define = (federation: Federation<void>) =>
        federation.defineTask("import", {
          schema: numberSchema,
          handler: (_ctx, data) => void ran.push(data.n),
        });
      define(worker);
      const task = define(caller);
      const cancelled: MessageCancelledEvent[] = [];
      worker.on("cancelled", (event) => void cancelled.push(event));
      const ctx = caller.createContext(new URL("https://app.example/"), undefined);
      const [first, second] = await ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
      assert(first.status === "enqueued" && second.status === "enqueued");
      assertEquals(
        await caller.cancelTask(first.messageId, { reason: "abandoned" }),
        { status: "cancelled", id: first.messageId, state: "queued" },
      );
      const status = await caller.getTaskStatus(first.messageId);
      assertEquals(status?.state, "cancelled");
      assertEquals(status?.reason, "abandoned");
      const stop = new AbortController();
      const running = worker.startQueue(undefined, { signal: stop.signal, queue: "task" });
      try {
        await waitUntil(() => ran.includes(2) && cancelled.length === 1, {
          what: () => `the second task to run and the first to be acked (ran ${ran})`,
          timeoutMs: TIMEOUT_MS,
        });
      } finally {
        stop.abort();
        await running;
      }
      assertEquals(ran, [2]);
      assertEquals(cancelled[0].messageId, first.messageId);
      assertEquals(cancelled[0].reason, "abandoned");
      assertEquals(cancelled[0].started, false);
      assertEquals((await caller.getTaskStatus(first.messageId))?.state, "cancelled");
      // A finished task, and one never enqueued: nothing to do, said so.
      assertEquals(await caller.cancelTask(second.messageId), {
        status: "finished",
        id: second.messageId,
        state: "completed",
      });
      assertEquals(await caller.cancelTask(first.messageId), {
        status: "finished",
        id: first.messageId,
        state: "cancelled",
      });
      assertEquals(await caller.cancelTask("no-such-task"), {
        status: "unknown",
        id: "no-such-task",
      });
    });
  });

  test(`${options.name}: a running task is cancelled from another federation`, async () => {
    await withBackends(options, 2, async ([workerBackend, callerBackend]) => {
      if (workerBackend.pubsub == null || callerBackend.pubsub == null) {
        throw new TypeError("The cancellation tests need open() to return a pubsub.");
      }
      const worker = federationOf(workerBackend);
      const caller = federationOf(callerBackend);
      const attempts = new Map<number, number>();
      const reasons = new Map<number, unknown>();
      const started = new Map<number, ReturnType<typeof deferred<void>>>();
      const gate = deferred();
      for (const n of [1, 2]) started.set(n, deferred());
      const define = (federation: Federation<void>) =>
        federation.defineTask("transcode", {
          schema: numberSchema,
          // Retries at once, so that a retry after the cancellation would
          // show.
          retryPolicy: ({ attempts }) => attempts < 3 ? millisecondsToDuration(0) : null,
          async handler(ctx, data) {
            attempts.set(data.n, (attempts.get(data.n) ?? 0) + 1);
            const aborted = new Promise<void>((resolve) =>
              ctx.task.signal.addEventListener("abort", () => resolve(), { once: true })
            );
            started.get(data.n)!.resolve();
            if (data.n === 1) {
              // Stops when its signal aborts, by throwing.
              await aborted;
              reasons.set(data.n, ctx.task.signal.reason);
              throw ctx.task.signal.reason;
            }
            // Ignores its signal, and returns a result when let go.
            await aborted;
            reasons.set(data.n, ctx.task.signal.reason);
            await gate.promise;
            return { done: true };
          },
        });
      define(worker);
      const task = define(caller);
      const ctx = caller.createContext(new URL("https://app.example/"), undefined);
      const [one, two] = await ctx.enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
      assert(one.status === "enqueued" && two.status === "enqueued");
      const stop = new AbortController();
      const running = worker.startQueue(undefined, { signal: stop.signal, queue: "task" });
      try {
        for (const [n, id] of [[1, one.messageId], [2, two.messageId]] as const) {
          await within(started.get(n)!.promise, `task ${n} to start`, TIMEOUT_MS);
          // The record says running once the worker wrote it (50 ms later).
          await waitUntil(async () => (await caller.getTaskStatus(id))?.state === "running", {
            what: `task ${n}'s record to say running`,
            timeoutMs: TIMEOUT_MS,
          });
          const updates: TaskUpdate[] = [];
          const subscribed = deferred();
          const watching = (async () => {
            for await (const update of caller.watchTask(id)) {
              subscribed.resolve();
              updates.push(update);
            }
          })();
          await within(subscribed.promise, `the watch of task ${n}`, TIMEOUT_MS);
          assertEquals(
            await caller.cancelTask(id, { reason: `stop ${n}` }),
            { status: "cancelled", id, state: "running" },
          );
          if (n === 2) {
            await waitUntil(() => reasons.has(2), {
              what: "task 2's signal to abort",
              timeoutMs: TIMEOUT_MS,
            });
            gate.resolve();
          }
          await within(watching, `the watch of task ${n} to end`, TIMEOUT_MS);
          const last = updates.at(-1)!.status;
          assertEquals(last.state, "cancelled");
          assertEquals(last.reason, `stop ${n}`);
          assertEquals(last.result, undefined);
          assertInstanceOf(reasons.get(n), TaskCancelledError);
          assertEquals((reasons.get(n) as TaskCancelledError).reason, `stop ${n}`);
        }
      } finally {
        gate.resolve();
        stop.abort();
        await running;
      }
      // Neither was retried.
      assertEquals(attempts.get(1), 1);
      assertEquals(attempts.get(2), 1);
    });
  });
}

/**
 * Registers the test of `enqueueTask()`'s `capabilities`: added to the
 * definition's, they route each task to a worker that has both.
 * @param options The backend's name and how to open it.
 * @since 0.3.0
 */
export function testPerTaskCapabilities(options: ProgressRoutingConformanceOptions): void {
  test(`${options.name}: enqueueTask()'s capabilities route with the task's own`, async () => {
    await withBackends(options, 3, async (backends) => {
      const ran: { task: string; worker: string; n: number }[] = [];
      const federations = backends.map((backend, i) => {
        const workerName = ["gpu", "ffmpeg", "both"][i];
        const federation = federationOf(backend);
        return {
          federation,
          plain: federation.defineTask("plain", {
            schema: numberSchema,
            handler: (_ctx, data) =>
              void ran.push({ task: "plain", worker: workerName, n: data.n }),
          }),
          video: federation.defineTask("video", {
            schema: numberSchema,
            capabilities: ["ffmpeg"],
            handler: (_ctx, data) =>
              void ran.push({ task: "video", worker: workerName, n: data.n }),
          }),
        };
      });
      const [a, b, c] = federations;
      const ctx = a.federation.createContext(new URL("https://app.example/"), undefined);
      await ctx.enqueueTaskMany(a.plain, [{ n: 0 }, { n: 1 }, { n: 2 }], {
        capabilities: ["gpu"],
      });
      const [both] = await ctx.enqueueTaskMany(a.video, [{ n: 9 }], { capabilities: ["gpu"] });
      assert(both.status === "enqueued");
      const stop = new AbortController();
      const workers = [
        b.federation.startQueue(undefined, {
          signal: stop.signal,
          queue: "task",
          capabilities: ["ffmpeg"],
        }),
        a.federation.startQueue(undefined, {
          signal: stop.signal,
          queue: "task",
          capabilities: ["gpu"],
        }),
      ];
      const ranOf = (task: string) => ran.filter((entry) => entry.task === task);
      try {
        await waitUntil(() => ranOf("plain").length >= 3, {
          what: () => `the plain tasks needing a gpu to run (ran ${JSON.stringify(ran)})`,
          timeoutMs: TIMEOUT_MS,
        });
        assert(ranOf("plain").every((entry) => entry.worker === "gpu"), JSON.stringify(ran));
        // Needs ffmpeg (its own) and gpu (the enqueue's): neither worker.
        assertEquals(ranOf("video"), []);
        assertEquals((await a.federation.getTaskStatus(both.messageId))?.state, "queued");
        workers.push(c.federation.startQueue(undefined, {
          signal: stop.signal,
          queue: "task",
          capabilities: ["gpu", "ffmpeg"],
        }));
        await waitUntil(() => ranOf("video").length === 1, {
          what: "the task needing both capabilities to run on the capable worker",
          timeoutMs: TIMEOUT_MS,
        });
        assertEquals(ranOf("video")[0].worker, "both");
      } finally {
        stop.abort();
        await Promise.all(workers);
      }
    });
  });
}
