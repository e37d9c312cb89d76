import {
  createFederation,
  type Federation,
  type KvStore,
  type MessageQueue,
  type PubSub,
  TaskProgressError,
  type TaskUpdate,
} from "@fedwork/core";
import { testPerTaskCapabilities, testTaskCancellation } from "./cancellation-suite.ts";
import { numberSchema, SUITE_TIMEOUT_MS, withBackends } from "./backend-set.ts";
import { assert, assertEquals, assertInstanceOf, test } from "./test-runner.ts";
import { deferred, waitUntil, within } from "./wait.ts";

/**
 * What one stand-in process of {@link testTaskProgressAndRouting} gets: its
 * own clients of the shared engine.
 * @since 0.2.0
 */
export interface ProgressRoutingBackend {
  /** The message queue, for every role. */
  readonly queue: MessageQueue;
  /** The key–value store. */
  readonly kv: KvStore;
  /**
   * The pub/sub transport; required unless the suite's `progress` option
   * is `false` (capability routing needs none).
   */
  readonly pubsub?: PubSub;
  /** Closes the clients. */
  dispose(): Promise<void>;
}

/**
 * Options for {@link testTaskProgressAndRouting}.
 * @since 0.2.0
 */
export interface ProgressRoutingConformanceOptions {
  /** The backend's name, in test names. */
  readonly name: string;
  /**
   * Opens a new set of clients on the namespace: called once per stand-in
   * process, so two calls with one namespace must share their data (the
   * same table, key prefix or queue name) through the engine.
   * @param namespace A fresh name per test.
   */
  open(namespace: string): ProgressRoutingBackend | Promise<ProgressRoutingBackend>;
  /** Removes what a test left on the engine, if needed. */
  cleanup?(namespace: string): Promise<void>;
  /**
   * Whether to register the progress test, which needs `pubsub` from
   * `open()`.  `true` by default.
   */
  readonly progress?: boolean;
}

const TIMEOUT_MS = SUITE_TIMEOUT_MS;

/**
 * Registers the tests of task progress and capability routing over a
 * backend, with two (or three) federations that each open their own
 * clients of the same engine, as separate processes would:
 *
 * - progress reported by a task on one federation's worker is seen live by
 *   `watchTask()` on the other, which ends at `completed`; the last
 *   progress is kept in `getTaskStatus()`; malformed progress is rejected
 *   with `TaskProgressError` (unless `progress` is `false`);
 * - with two workers of different capabilities, each runs only the tasks
 *   it can, none is lost, and a task needing a capability no worker has
 *   stays queued until a capable worker starts;
 * - `enqueueTask()`'s `capabilities` add to the task's own (since 0.3.0);
 * - cancellation (since 0.3.0, unless `progress` is `false`): a queued
 *   task cancelled on one federation never runs on the other's worker; a
 *   running one has its signal aborted there and ends `cancelled`
 *   without a retry (see `testTaskCancellation()`).
 * @param options The backend's name and how to open it.
 * @since 0.2.0
 */
export function testTaskProgressAndRouting(options: ProgressRoutingConformanceOptions): void {
  if (options.progress ?? true) {
    testProgress(options);
    testTaskCancellation(options);
  }
  testRouting(options);
  testPerTaskCapabilities(options);
}

function testProgress(options: ProgressRoutingConformanceOptions): void {
  test(`${options.name}: task progress is seen live across federations`, async () => {
    await withBackends(options, 2, async ([worker, watcher]) => {
      if (worker.pubsub == null || watcher.pubsub == null) {
        throw new TypeError("The progress test needs open() to return a pubsub.");
      }
      const federations = [worker, watcher].map((backend) =>
        createFederation<void>({
          kv: backend.kv,
          queue: backend.queue,
          pubsub: backend.pubsub,
          manuallyStartQueue: true,
        })
      );
      const gate = deferred();
      const rejections: unknown[] = [];
      const tasks = federations.map((federation) =>
        federation.defineTask("resize", {
          schema: numberSchema,
          async handler(ctx) {
            await ctx.task.reportProgress(10);
            await gate.promise;
            for (
              const bad of [101, -1, Number.NaN, Infinity, { data: () => 1 }, {
                data: "x".repeat(5000),
              }, { percent: "50" }]
            ) {
              try {
                // deno-lint-ignore no-explicit-any
                await ctx.task.reportProgress(bad as any);
                rejections.push("accepted");
              } catch (error) {
                rejections.push(error);
              }
            }
            await ctx.task.reportProgress({ percent: 60, data: { step: "encode" } });
          },
        })
      );
      const [workerFed, watcherFed] = federations as [Federation<void>, Federation<void>];
      const result = await watcherFed.createContext(new URL("https://app.example/"), undefined)
        .enqueueTask(tasks[1], { n: 1 });
      assert(result.status === "enqueued");
      const id = result.messageId;
      const seen: TaskUpdate[] = [];
      const watchController = new AbortController();
      const subscribed = deferred();
      const watching = (async () => {
        for await (const update of watcherFed.watchTask(id, { signal: watchController.signal })) {
          // The first update is the snapshot, read once subscribed.
          subscribed.resolve();
          seen.push(update);
          if (update.status.progress?.percent === 10) gate.resolve();
        }
      })();
      await within(subscribed.promise, "watchTask() to yield the queued status", TIMEOUT_MS);
      assertEquals(seen[0]?.status.state, "queued");
      const stop = new AbortController();
      const running = workerFed.startQueue(undefined, { signal: stop.signal, queue: "task" });
      try {
        await within(watching, "watchTask() to end at completed", TIMEOUT_MS);
      } finally {
        watchController.abort();
        stop.abort();
        await running;
      }
      const states = seen.map((update) => `${update.kind}:${update.status.state}`);
      assertEquals(states.at(-1), "state:completed");
      assert(states.includes("state:running"), `no running update in ${states.join(", ")}`);
      const percents = seen.filter((update) => update.kind === "progress")
        .map((update) => update.status.progress?.percent);
      assertEquals(percents, [10, 60]);
      assertEquals(rejections.length, 7);
      for (const rejection of rejections) assertInstanceOf(rejection, TaskProgressError);
      const status = await watcherFed.getTaskStatus(id);
      assertEquals(status?.state, "completed");
      assertEquals(status?.name, "resize");
      assertEquals(status?.progress?.percent, 60);
      assertEquals(status?.progress?.data, { step: "encode" });
      // watchTask() of a finished task yields its status and ends.
      const again: TaskUpdate[] = [];
      for await (const update of watcherFed.watchTask(id)) again.push(update);
      assertEquals(again.map((update) => update.status.state), ["completed"]);
    });
  });
}

function testRouting(options: ProgressRoutingConformanceOptions): void {
  test(`${options.name}: capability routing runs each task on a capable worker`, async () => {
    await withBackends(options, 3, async (backends) => {
      const ran: { task: string; worker: string; n: number }[] = [];
      const federations = backends.map((backend, i) => {
        const worker = ["gpu", "ffmpeg", "both"][i];
        const federation = createFederation<void>({
          kv: backend.kv,
          queue: backend.queue,
          ...(backend.pubsub == null ? {} : { pubsub: backend.pubsub }),
          manuallyStartQueue: true,
        });
        const define = (task: string, capabilities?: string[]) =>
          federation.defineTask(task, {
            schema: numberSchema,
            ...(capabilities == null ? {} : { capabilities }),
            handler: (_ctx, data) => void ran.push({ task, worker, n: data.n }),
          });
        return {
          federation,
          plain: define("plain"),
          gpu: define("render", ["gpu"]),
          ffmpeg: define("transcode", ["ffmpeg"]),
          both: define("render-video", ["ffmpeg", "gpu"]),
        };
      });
      const [a, b, c] = federations;
      const ctx = a.federation.createContext(new URL("https://app.example/"), undefined);
      const count = 5;
      const payloads = Array.from({ length: count }, (_, n) => ({ n }));
      await ctx.enqueueTaskMany(a.plain, payloads);
      await ctx.enqueueTaskMany(a.gpu, payloads);
      await ctx.enqueueTaskMany(a.ffmpeg, payloads);
      const [both] = await ctx.enqueueTaskMany(a.both, [{ n: 0 }]);
      assert(both.status === "enqueued");
      const stop = new AbortController();
      const workers = [
        a.federation.startQueue(undefined, {
          signal: stop.signal,
          queue: "task",
          capabilities: ["gpu"],
        }),
        b.federation.startQueue(undefined, {
          signal: stop.signal,
          queue: "task",
          capabilities: ["ffmpeg"],
        }),
      ];
      const ranOf = (task: string) => ran.filter((entry) => entry.task === task);
      try {
        await waitUntil(
          () =>
            ranOf("plain").length >= count && ranOf("render").length >= count &&
            ranOf("transcode").length >= count,
          {
            what: () => `every routed task to run (ran ${JSON.stringify(ran)})`,
            timeoutMs: TIMEOUT_MS,
          },
        );
        assert(ranOf("render").every((entry) => entry.worker === "gpu"));
        assert(ranOf("transcode").every((entry) => entry.worker === "ffmpeg"));
        const sorted = (task: string) => ranOf(task).map((entry) => entry.n).sort();
        assertEquals(sorted("plain"), [0, 1, 2, 3, 4]);
        assertEquals(sorted("render"), [0, 1, 2, 3, 4]);
        assertEquals(sorted("transcode"), [0, 1, 2, 3, 4]);
        // No worker has both capabilities: the task waits, still queued.
        assertEquals(ranOf("render-video"), []);
        assertEquals((await a.federation.getTaskStatus(both.messageId))?.state, "queued");
        // A worker that has both takes it.
        workers.push(c.federation.startQueue(undefined, {
          signal: stop.signal,
          queue: "task",
          capabilities: ["gpu", "ffmpeg", "cuda"],
        }));
        await waitUntil(() => ranOf("render-video").length === 1, {
          what: "the task needing both capabilities to run on the capable worker",
          timeoutMs: TIMEOUT_MS,
        });
        assertEquals(ranOf("render-video")[0].worker, "both");
      } finally {
        stop.abort();
        await Promise.all(workers);
      }
    });
  });
}
