// Tasks whose handler gets many payloads per run (`handleMany`), end to end
// through a federation on the in-process queue: grouping, the wait, item
// failures, option checks and types.
import {
  assert,
  assertEquals,
  assertThrows,
  deferred,
  test,
  within,
  withLogs,
} from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../federation/federation.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { HandlerTimeoutError, PermanentError } from "../processing/errors.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueue } from "../queue/message-queue.ts";
import { ParallelMessageQueue } from "../queue/parallel-message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { TaskDefinitionError } from "./errors.ts";
import type { TaskItem } from "./handle-many.ts";
import { TaskItemFailure } from "./item-failure.ts";

const base = new URL("https://web.example/");
const retryAfter = (ms: number): RetryPolicy => ({ attempts }) =>
  attempts >= 5 ? null : millisecondsToDuration(ms);

/** A federation on an in-process queue that runs `workers` messages at once. */
function federationOn(workers: number, retryPolicy = retryAfter(10)): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), workers),
    manuallyStartQueue: true,
    taskRetryPolicy: retryPolicy,
  });
}

async function withWorker(federation: Federation<void>, body: () => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await body();
  } finally {
    controller.abort();
    await worker;
  }
}

test("a handleMany task gets its payloads in runs of at most size", async () => {
  const federation = federationOn(8);
  const runs: number[][] = [];
  const all = deferred();
  const task = federation.defineTask("index", {
    schema: z.object({ n: z.number() }),
    // A wait no run reaches here: every run is full.
    handleMany: { size: 3, wait: { seconds: 30 } },
    handler(_ctx, items) {
      runs.push(items.map((item) => item.data.n));
      if (runs.flat().length === 6) all.resolve();
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(
      task,
      [1, 2, 3, 4, 5, 6].map((n) => ({ n })),
    );
    await within(all.promise, "six items");
  });
  assertEquals(runs.map((run) => run.length), [3, 3]);
  assertEquals(runs.flat().sort(), [1, 2, 3, 4, 5, 6]);
});

test("on the default in-process queue, one message at a time, a handleMany run fills to its size", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  const runs: number[][] = [];
  const all = deferred();
  const task = federation.defineTask("index", {
    schema: z.object({ n: z.number() }),
    // Without the slots its waiting items give up, each run would have one
    // item, 30 seconds after it.
    handleMany: { size: 4, wait: { seconds: 30 } },
    handler(_ctx, items) {
      runs.push(items.map((item) => item.data.n));
      if (runs.flat().length === 12) all.resolve();
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(
      task,
      Array.from({ length: 12 }, (_, n) => ({ n })),
    );
    await within(all.promise, "twelve items");
  });
  assertEquals(runs.map((run) => run.length), [4, 4, 4]);
  assertEquals(runs.flat().sort((a, b) => a - b), Array.from({ length: 12 }, (_, n) => n));
});

test("a handleMany task with fewer items than size runs them together after wait", async () => {
  const federation = federationOn(8);
  const runs: { readonly items: number; readonly afterMs: number }[] = [];
  const ran = deferred();
  let enqueuedAt = 0;
  const task = federation.defineTask("digest", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 10, wait: { milliseconds: 600 } },
    handler(_ctx, items) {
      runs.push({ items: items.length, afterMs: performance.now() - enqueuedAt });
      ran.resolve();
    },
  });
  await withWorker(federation, async () => {
    enqueuedAt = performance.now();
    await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
    await within(ran.promise, "the run");
  });
  assertEquals(runs.length, 1);
  assertEquals(runs[0].items, 2);
  // The timer starts with the first item, after the enqueue: never earlier.
  assert(runs[0].afterMs >= 590, `the run came ${runs[0].afterMs} ms after the enqueue`);
});

test("a TaskItemFailure fails that item alone: it is retried on its own and the others complete", async () => {
  const federation = federationOn(8);
  const runs: { n: number; attempt: number }[][] = [];
  const completed: number[] = [];
  const done = deferred();
  const task = federation.defineTask("send", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 3, wait: { milliseconds: 200 } },
    handler(_ctx, items) {
      runs.push(items.map((item) => ({ n: item.data.n, attempt: item.attempt })));
      return items.map((item) =>
        item.data.n === 2 && item.attempt === 0 ? new TaskItemFailure(new Error("busy")) : undefined
      );
    },
    on: {
      completed() {
        completed.push(completed.length);
        if (completed.length === 3) done.resolve();
      },
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    await within(done.promise, "three completions");
  });
  // However the items were grouped, 1 and 3 ran once, and 2 twice: its
  // retry alone.
  const ranItems = runs.flat().sort((a, b) => a.n - b.n || a.attempt - b.attempt);
  assertEquals(ranItems, [
    { n: 1, attempt: 0 },
    { n: 2, attempt: 0 },
    { n: 2, attempt: 1 },
    { n: 3, attempt: 0 },
  ]);
  const retryRun = runs.find((run) => run.some((item) => item.attempt === 1))!;
  assertEquals(retryRun, [{ n: 2, attempt: 1 }]);
});

test("a handleMany handler that throws fails every item of the run, each retried by the policy", async () => {
  const federation = federationOn(8);
  const attempts = new Map<number, number[]>();
  const errors: unknown[] = [];
  const done = deferred();
  let completed = 0;
  const task = federation.defineTask("flaky-many", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 2, wait: { milliseconds: 100 } },
    handler(_ctx, items) {
      for (const item of items) {
        attempts.set(item.data.n, [...attempts.get(item.data.n) ?? [], item.attempt]);
      }
      if (items.some((item) => item.attempt === 0)) throw new Error("down");
    },
    onError(_ctx, error, items) {
      errors.push(error, items.length);
    },
    on: {
      completed() {
        if (++completed === 2) done.resolve();
      },
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
    await within(done.promise, "two completions");
  });
  assertEquals(attempts.get(1), [0, 1]);
  assertEquals(attempts.get(2), [0, 1]);
  assert(errors.length >= 2);
});

test("a PermanentError in a TaskItemFailure fails the item for good", async () => {
  const federation = federationOn(4);
  const failed = deferred<string>();
  const runs: number[] = [];
  const task = federation.defineTask("refuse", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 4, wait: { milliseconds: 50 } },
    handler(_ctx, items) {
      runs.push(...items.map((item) => item.data.n));
      return items.map(() => new TaskItemFailure(new PermanentError("never")));
    },
    on: {
      failed(event) {
        failed.resolve(event.reason);
      },
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTask(task, { n: 7 });
    assertEquals(await within(failed.promise, "the failure"), "permanent");
  });
  assertEquals(runs, [7]);
});

test("a handleMany handler that returns the wrong number of entries fails the run's items", async () => {
  const federation = federationOn(4, () => null);
  const failed = deferred<unknown>();
  const task = federation.defineTask("miscount", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 4, wait: { milliseconds: 20 } },
    handler() {
      return [];
    },
    on: {
      failed(event) {
        failed.resolve(event.error);
      },
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTask(task, { n: 1 });
    const error = await within(failed.promise, "the failure");
    assert(error instanceof TypeError);
    assert(/one entry per item/.test(error.message), error.message);
  });
});

test("defineTask() checks handleMany: size, wait and unknown fields", () => {
  const federation = federationOn(1);
  const schema = z.object({ n: z.number() });
  const handler = () => {};
  for (
    const [handleMany, pattern] of [
      [{ size: 0 }, /handleMany\.size .* from 1 to 1000; got 0/],
      [{ size: 1001 }, /from 1 to 1000/],
      [{ size: 2.5 }, /integer/],
      [{ size: 5, wait: { minutes: 2 } }, /handleMany\.wait .* one minute/],
      [{ size: 5, wait: "soon" }, /handleMany\.wait .* duration/],
      [{ size: 5, wiat: { seconds: 1 } }, /wait/],
      [5, /must be an object/],
    ] as const
  ) {
    const error = assertThrows(
      () => federation.defineTask("bad", { schema, handleMany: handleMany as never, handler }),
      TaskDefinitionError,
    );
    assertEquals(error.option, "handleMany");
    assert(pattern.test(error.message), error.message);
  }
});

test("a handleMany handler's items are typed by the schema", () => {
  const federation = federationOn(1);
  federation.defineTask("typed", {
    schema: z.object({ n: z.number(), s: z.string().transform((s) => s.length) }),
    handleMany: { size: 2 },
    handler(_ctx, items) {
      const first: TaskItem<{ n: number; s: number }> = items[0];
      const n: number = first.data.n;
      // @ts-expect-error: the schema's output is a number
      const s: string = items[0].data.s;
      return items.map((item) => item.data.n > 0 ? { n } : new TaskItemFailure(s));
    },
  });
  federation.defineTask("plain-typed", {
    schema: z.object({ n: z.number() }),
    handler(_ctx, data) {
      const n: number = data.n;
      // @ts-expect-error: a plain task gets one payload, not items
      data[0].data;
      return void n;
    },
  });
});

test("an item cancelled while it waits for its run leaves it, and the run goes on without it", async () => {
  const federation = federationOn(8);
  const runs: number[][] = [];
  const cancelled = deferred<{ readonly started: boolean }>();
  const ran = deferred();
  const task = federation.defineTask("cancel-many", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 2, wait: { seconds: 30 } },
    handler(_ctx, items) {
      runs.push(items.map((item) => item.data.n));
      ran.resolve();
    },
    on: {
      cancelled(event) {
        cancelled.resolve({ started: event.started });
      },
    },
  });
  await withWorker(federation, async () => {
    const ctx = federation.createContext(base);
    const first = await ctx.enqueueTask(task, { n: 1 });
    assert(first.status === "enqueued");
    // Running: its worker holds it, waiting for a second item.
    await within(
      (async () => {
        while ((await federation.getTaskStatus(first.messageId))?.state !== "running") {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })(),
      "the first item to wait for its run",
    );
    await federation.cancelTask(first.messageId);
    assertEquals(await within(cancelled.promise, "the cancellation"), { started: false });
    await ctx.enqueueTaskMany(task, [{ n: 2 }, { n: 3 }]);
    await within(ran.promise, "the run");
  });
  assertEquals(runs.map((run) => run.sort()), [[2, 3]]);
});

test("a handleMany item's deduplication key is held until that item's outcome, then freed", async () => {
  const federation = federationOn(8);
  const runs: number[][] = [];
  let completed = 0;
  const firstDone = deferred();
  const secondDone = deferred();
  const task = federation.defineTask("dedup-many", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 2, wait: { milliseconds: 50 } },
    handler(_ctx, items) {
      runs.push(items.map((item) => item.data.n));
    },
    on: {
      completed() {
        completed++;
        if (completed === 2) firstDone.resolve();
        if (completed === 3) secondDone.resolve();
      },
    },
  });
  const ctx = federation.createContext(base);
  // Held while queued: the second enqueue with the key adds nothing.
  assertEquals(
    (await ctx.enqueueTask(task, { n: 1 }, { deduplicationKey: "k" })).status,
    "enqueued",
  );
  assertEquals(
    (await ctx.enqueueTask(task, { n: 2 }, { deduplicationKey: "k" })).status,
    "deduplicated",
  );
  await ctx.enqueueTask(task, { n: 3 }, { deduplicationKey: "other" });
  await withWorker(federation, async () => {
    await within(firstDone.promise, "the first run's items");
    // Freed by the item's completion: the key takes a new task.
    assertEquals(
      (await ctx.enqueueTask(task, { n: 4 }, { deduplicationKey: "k" })).status,
      "enqueued",
    );
    await within(secondDone.promise, "the later item");
  });
  assertEquals(runs.flat().sort(), [1, 3, 4]);
});

test("ctx.step in a handleMany handler throws a TypeError that says why", async () => {
  const federation = federationOn(4);
  const seen = deferred<unknown>();
  const task = federation.defineTask("steps-in-many", {
    schema: z.object({ n: z.number() }),
    handleMany: { size: 2, wait: { milliseconds: 10 } },
    retryPolicy: () => null,
    handler(ctx) {
      try {
        ctx.step;
        seen.resolve("no error");
      } catch (error) {
        seen.resolve(error);
      }
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
    const error = await within(seen.promise, "the handler's run");
    assert(error instanceof TypeError, String(error));
    assert(error.message.includes("not handleMany"), error.message);
  });
});

test("cancelling one item of a running handleMany run with a time limit leaves the run's signal alone", async () => {
  const federation = federationOn(8);
  const started = deferred<{ readonly ids: readonly string[] }>();
  const itemAborted = deferred();
  const finish = deferred();
  const runSignals: AbortSignal[] = [];
  const outcomes: string[] = [];
  const settled = deferred();
  const note = (outcome: string) => {
    outcomes.push(outcome);
    if (outcomes.length === 2) settled.resolve();
  };
  const task = federation.defineTask("limited-many", {
    schema: z.object({ n: z.number() }),
    timeout: { minutes: 5 },
    handleMany: { size: 2, wait: { seconds: 30 } },
    async handler(ctx, items) {
      runSignals.push(ctx.task.signal);
      const first = items.find((item) => item.data.n === 1)!;
      first.signal.addEventListener("abort", () => itemAborted.resolve(), { once: true });
      started.resolve({ ids: items.map((item) => item.id) });
      await finish.promise;
    },
    on: {
      completed: () => note("completed"),
      cancelled: () => note("cancelled"),
      failed: () => note("failed"),
    },
  });
  await withWorker(federation, async () => {
    const ctx = federation.createContext(base);
    const first = await ctx.enqueueTask(task, { n: 1 });
    assert(first.status === "enqueued");
    await ctx.enqueueTask(task, { n: 2 });
    try {
      const { ids } = await within(started.promise, "the run");
      assertEquals(ids.length, 2);
      await federation.cancelTask(first.messageId);
      await within(itemAborted.promise, "the cancelled item's signal");
      // The other item's run goes on: its signal did not abort with the item's.
      assertEquals(runSignals.map((signal) => signal.aborted), [false]);
    } finally {
      finish.resolve();
    }
    await within(settled.promise, "both outcomes");
  });
  assertEquals(outcomes.sort(), ["cancelled", "completed"]);
});

test("a handleMany run's signal aborts with a HandlerTimeoutError when the task's time limit passes", async () => {
  const federation = federationOn(8, () => null);
  const aborted = deferred<unknown>();
  const task = federation.defineTask("slow-many", {
    schema: z.object({ n: z.number() }),
    timeout: { milliseconds: 200 },
    handleMany: { size: 2, wait: { seconds: 30 } },
    async handler(ctx) {
      const signal = ctx.task.signal;
      await new Promise<void>((resolve) => {
        signal.addEventListener("abort", () => {
          aborted.resolve(signal.reason);
          resolve();
        }, { once: true });
      });
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
    const reason = await within(aborted.promise, "the run's signal to abort");
    assert(reason instanceof HandlerTimeoutError, `aborted with ${reason}`);
    assertEquals(reason.taskName, "slow-many");
    assertEquals(reason.timeoutMs, 200);
  });
});

test("a handleMany run that stops at its time limit times every item out, each with its own error", async () => {
  const federation = federationOn(8, () => null);
  const failed: { id: string; reason: string; abandoned?: boolean; error: unknown }[] = [];
  const both = deferred();
  let ids: readonly string[] = [];
  let itemsAborted: readonly boolean[] = [];
  const task = federation.defineTask("stopping-many", {
    schema: z.object({ n: z.number() }),
    timeout: { milliseconds: 150 },
    handleMany: { size: 2, wait: { seconds: 30 } },
    async handler(ctx, items) {
      ids = items.map((item) => item.id);
      const signal = ctx.task.signal;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
      itemsAborted = items.map((item) => item.signal.aborted);
      // Returning after the limit does not make the run complete.
    },
    on: {
      failed(event) {
        failed.push({
          id: event.messageId,
          reason: event.reason,
          abandoned: event.abandoned,
          error: event.error,
        });
        if (failed.length === 2) both.resolve();
      },
    },
  });
  await withWorker(federation, async () => {
    await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
    await within(both.promise, "both items to fail");
  });
  assertEquals(failed.map((f) => f.id).sort(), [...ids].sort());
  // The time limit is the run's: the items' own signals did not abort.
  assertEquals(itemsAborted, [false, false]);
  for (const f of failed) {
    assertEquals(f.reason, "timeout");
    assertEquals(f.abandoned, false);
    assert(f.error instanceof HandlerTimeoutError, String(f.error));
    assertEquals(f.error.messageId, f.id);
    assertEquals(f.error.timeoutMs, 150);
  }
});

test("a handleMany run that ignores its signal is abandoned after the grace period, its items retried", async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), 4),
    manuallyStartQueue: true,
    taskRetryPolicy: retryAfter(10),
    timeoutGracePeriod: { milliseconds: 100 },
  });
  const release = deferred();
  const retried = deferred<readonly number[]>();
  const retrying: { reason: string; abandoned?: boolean }[] = [];
  let runs = 0;
  const task = federation.defineTask("stuck-many", {
    schema: z.object({ n: z.number() }),
    timeout: { milliseconds: 100 },
    handleMany: { size: 2, wait: { seconds: 30 } },
    async handler(_ctx, items) {
      if (runs++ === 0) {
        // Ignores its signal: the worker moves on without it.
        await release.promise;
        return;
      }
      retried.resolve(items.map((item) => item.attempt));
    },
    on: {
      retrying(event) {
        retrying.push({ reason: event.reason, abandoned: event.abandoned });
      },
    },
  });
  try {
    await withLogs(async (logs) => {
      await withWorker(federation, async () => {
        await federation.createContext(base).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }]);
        // The second run takes both items again while the first still hangs.
        assertEquals(await within(retried.promise, "the items' second run"), [1, 1]);
      });
      // One warning for the abandoned run, not one per item.
      const abandonment = logs.filter((log) =>
        log.level === "warning" && String(log.rawMessage).includes("ignored its signal")
      );
      assertEquals(abandonment.map((log) => log.properties.runMessages), [2]);
    });
  } finally {
    release.resolve();
  }
  assertEquals(retrying, [
    { reason: "timeout", abandoned: true },
    { reason: "timeout", abandoned: true },
  ]);
});

test("startQueue() listens to a queue with the largest handleMany size of its tasks as batchSize", async () => {
  const inner = new InProcessMessageQueue();
  const listened: (number | undefined)[] = [];
  const queue: MessageQueue = {
    enqueue: (message, options) => inner.enqueue(message, options),
    listen(handler, options) {
      listened.push(options?.batchSize);
      return inner.listen(handler, options);
    },
  };
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
  });
  const schema = z.object({ n: z.number() });
  federation.defineTask("small", { schema, handleMany: { size: 5 }, handler() {} });
  federation.defineTask("large", { schema, handleMany: { size: 30 }, handler() {} });
  federation.defineTask("plain", { schema, handler() {} });
  await withWorker(federation, async () => {
    await waitUntilListening(listened);
  });
  assertEquals(listened, [30]);
});

async function waitUntilListening(listened: readonly unknown[]): Promise<void> {
  await within(
    (async () => {
      while (listened.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    })(),
    "the worker to listen",
  );
}
