// The time-limit part of the federation suite: with one worker slot (every
// backend's default concurrency), a handler that never settles must not
// stop the messages behind it, and a timed-out attempt must be retried
// through the backend like any failure.
import {
  createFederationBuilder,
  type Federation,
  HandlerTimeoutError,
  MemoryKvStore,
  type MessageEvent,
  millisecondsToDuration,
  type TaskDefinition,
} from "@fedwork/core";
import { EVENT_TIMEOUT_MS, type QueueTestRun, runQueueTest } from "./queue-harness.ts";
import { assert, assertEquals, assertInstanceOf, test } from "./test-runner.ts";
import { deferred, within } from "./wait.ts";

/** The time limit the suite's tasks get: short, so the suite stays quick. */
const LIMIT_MS = 200;
/** The grace period the suite's workers give a timed-out handler. */
const GRACE_MS = 200;
/**
 * How long the message behind a hung one may take: the limit, the grace
 * period and a generous margin for a loaded machine.  Never a speed check.
 */
const BEHIND_TIMEOUT_MS = LIMIT_MS + GRACE_MS + 10_000;

/** The payload schema of the suite's tasks: `{ n: number }`. */
const countSchema: {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
    ) => { readonly value: { n: number } } | { readonly issues: { message: string }[] };
    readonly types?: { readonly input: { n: number }; readonly output: { n: number } };
  };
} = {
  "~standard": {
    version: 1,
    vendor: "fedwork-testing",
    validate: (value) =>
      typeof (value as { n?: unknown })?.n === "number"
        ? { value: value as { n: number } }
        : { issues: [{ message: "Expected { n: number }." }] },
  },
};

type Builder = ReturnType<typeof createFederationBuilder<void>>;

/**
 * Builds a "web" federation that enqueues and a "worker" one that runs,
 * each on its own queue instance of the test's namespace, the worker with
 * the suite's short grace period.
 */
async function buildWebAndWorker(
  run: QueueTestRun,
  define: (builder: Builder) => void,
): Promise<{ web: Federation<void>; worker: Federation<void> }> {
  const builder = createFederationBuilder<void>();
  define(builder);
  const web = await builder.build({
    kv: new MemoryKvStore(),
    queue: await run.createQueue(),
    manuallyStartQueue: true,
  });
  const worker = await builder.build({
    kv: new MemoryKvStore(),
    queue: await run.createQueue(),
    manuallyStartQueue: true,
    timeoutGracePeriod: { milliseconds: GRACE_MS },
  });
  return { web, worker };
}

/**
 * Registers the time-limit tests of `testFederationOverQueue()`.
 * @param name The backend's name, for the test names.
 * @param factoryModule The backend's factory module.
 * @param leaseMs The lease the queue instances get.
 */
export function testHandlerTimeouts(name: string, factoryModule: string, leaseMs: number): void {
  test(`${name}: a task that never settles is timed out and abandoned, and the task behind it completes`, async () => {
    await runQueueTest(factoryModule, leaseMs, async (run) => {
      const started = deferred();
      const behindDone = deferred();
      const failed = deferred<MessageEvent>();
      let hung!: TaskDefinition<void, { n: number }>;
      let behind!: TaskDefinition<void, { n: number }>;
      const { web, worker } = await buildWebAndWorker(run, (builder) => {
        hung = builder.defineTask("hung", {
          schema: countSchema,
          timeout: { milliseconds: LIMIT_MS },
          retryPolicy: () => null,
          handler() {
            started.resolve();
            // Ignores its signal: awaits what nobody ever resolves.
            return new Promise<void>(() => {});
          },
          on: { failed: (event) => failed.resolve(event) },
        });
        behind = builder.defineTask("behind", {
          schema: countSchema,
          handler: () => behindDone.resolve(),
        });
      });
      const controller = new AbortController();
      const working = worker.startQueue(undefined, { signal: controller.signal, queue: "task" });
      try {
        const ctx = web.createContext(new URL("https://web.example/"), undefined);
        await ctx.enqueueTask(hung, { n: 1 });
        await within(started.promise, "the hung task to start", EVENT_TIMEOUT_MS);
        // Enqueued only now, so that it waits behind the hung task's slot.
        await ctx.enqueueTask(behind, { n: 2 });
        await within(
          behindDone.promise,
          "the task behind the hung one to complete",
          BEHIND_TIMEOUT_MS,
        );
        const event = await within(failed.promise, "the hung task's failed event");
        assert(event.type === "failed", "the hung task failed");
        assertEquals(event.reason, "timeout");
        assertEquals(event.abandoned, true);
        assertInstanceOf(event.error, HandlerTimeoutError);
        assertEquals(event.error.timeoutMs, LIMIT_MS);
      } finally {
        controller.abort();
        await working;
      }
    });
  });

  test(`${name}: a task that honours its timed-out signal is retried with reason timeout`, async () => {
    await runQueueTest(factoryModule, leaseMs, async (run) => {
      const reasons: unknown[] = [];
      const retrying = deferred<MessageEvent>();
      const completed = deferred<number>();
      let polite!: TaskDefinition<void, { n: number }>;
      const { web, worker } = await buildWebAndWorker(run, (builder) => {
        polite = builder.defineTask("polite", {
          schema: countSchema,
          timeout: { milliseconds: LIMIT_MS },
          retryPolicy: ({ attempts }) => attempts > 3 ? null : millisecondsToDuration(100),
          async handler(ctx) {
            if (ctx.task.attempt > 0) return;
            const { signal } = ctx.task;
            await new Promise<void>((_, reject) =>
              signal.addEventListener("abort", () => {
                reasons.push(signal.reason);
                reject(signal.reason);
              })
            );
          },
          on: {
            retrying: (event) => retrying.resolve(event),
            completed: (event) => completed.resolve(event.attempt),
          },
        });
      });
      const controller = new AbortController();
      const working = worker.startQueue(undefined, { signal: controller.signal, queue: "task" });
      try {
        await web.createContext(new URL("https://web.example/"), undefined)
          .enqueueTask(polite, { n: 1 });
        const attempt = await within(
          completed.promise,
          "the retried task to complete",
          EVENT_TIMEOUT_MS,
        );
        assertEquals(attempt, 1);
        const event = await retrying.promise;
        assert(event.type === "retrying", "the first attempt was retried");
        assertEquals(event.reason, "timeout");
        assertEquals(event.abandoned, false);
        assertInstanceOf(event.error, HandlerTimeoutError);
        assertEquals(reasons.length, 1);
        assertInstanceOf(reasons[0], HandlerTimeoutError);
      } finally {
        controller.abort();
        await working;
      }
    });
  });
}
