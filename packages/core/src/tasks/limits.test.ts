// The concurrency and rateLimit options of defineTask() within one process:
// their checks, that they hold, that waits spend no attempt and are
// visible, and that a task without them never touches their keys.  Across
// processes on real engines they are tested by @fedwork/testing's
// testTaskLimits().
import { assert, assertEquals, assertThrows, deferred, test, within } from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "../federation/federation.ts";
import type { KvKey, KvStore } from "../kv/kv-store.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import type { MessageRetryingEvent } from "../processing/events.ts";
import { MESSAGE_METRICS } from "../processing/metrics.ts";
import { RunPostponedError } from "../processing/run-postponed.ts";
import { count, testMeters } from "../processing/testdata/test-meters.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { ParallelMessageQueue } from "../queue/parallel-message-queue.ts";
import { TaskDefinitionError } from "./errors.ts";

const base = new URL("https://web.example/");
const schema = z.object({ key: z.string(), n: z.number() });

/** A memory store that counts the reads of limit keys. */
class CountingKvStore extends MemoryKvStore {
  limitReads = 0;
  override get<T = unknown>(key: KvKey): Promise<T | undefined> {
    if (key[1] === "task-concurrency" || key[1] === "task-rate") this.limitReads++;
    return super.get<T>(key);
  }
}

function setUp() {
  const kv = new CountingKvStore();
  const federation = createFederation<void>({
    kv,
    // Eight at once, so that a limit of 2 is what stops a third.
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), 8),
    manuallyStartQueue: true,
  });
  return { kv, federation, ctx: federation.createContext(base, undefined) };
}

async function withWorkers(
  federation: ReturnType<typeof setUp>["federation"],
  body: () => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  const workers = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await body();
  } finally {
    controller.abort();
    await workers;
  }
}

test("defineTask checks concurrency and rateLimit, naming the field", () => {
  const { federation } = setUp();
  const define = (options: object) => () =>
    federation.defineTask(`t${Math.random()}`, { schema, handler: () => {}, ...options });
  const cases: [object, string][] = [
    [{ concurrency: 2 }, "concurrency"],
    [{ concurrency: { limit: 2 } }, "concurrency.key"],
    [{ concurrency: { key: () => "a" } }, "concurrency.limit"],
    [{ concurrency: { key: () => "a", limit: 0 } }, "concurrency.limit"],
    [{ concurrency: { key: () => "a", limit: 1.5 } }, "concurrency.limit"],
    [{ concurrency: { key: () => "a", limit: 1, max: 2 } }, "concurrency"],
    [{ rateLimit: { limit: 1 } }, "rateLimit.period"],
    [{ rateLimit: { period: { seconds: 1 } } }, "rateLimit.limit"],
    [{ rateLimit: { limit: 1, period: { seconds: 0 } } }, "rateLimit.period"],
    [{ rateLimit: { limit: 1, period: { days: 2 } } }, "rateLimit.period"],
    [{ rateLimit: { limit: 1, period: { seconds: 1 }, key: "a" } }, "rateLimit.key"],
    [{ rateLimit: { limit: 1, perod: { seconds: 1 } } }, "rateLimit"],
  ];
  for (const [options, option] of cases) {
    const error = assertThrows(define(options), TaskDefinitionError);
    assertEquals(error.option, option, error.message);
  }
  const unknown = assertThrows(
    define({ rateLimit: { limit: 1, period: { seconds: 1 }, perod: 1 } }),
    TaskDefinitionError,
  );
  assert(unknown.message.includes("rateLimit.perod"), unknown.message);
  assert(unknown.message.includes("did you mean"), unknown.message);
});

test("defineTask refuses concurrency and rateLimit on a store without cas()", () => {
  const memory = new MemoryKvStore();
  const kv: KvStore = {
    get: (key) => memory.get(key),
    set: (key, value, options) => memory.set(key, value, options),
    delete: (key) => memory.delete(key),
    list: (prefix) => memory.list(prefix),
  };
  const federation = createFederation<void>({ kv, queue: new InProcessMessageQueue() });
  const error = assertThrows(
    () =>
      federation.defineTask("t", {
        schema,
        handler: () => {},
        rateLimit: { limit: 1, period: { seconds: 1 } },
      }),
    TaskDefinitionError,
    "cas()",
  );
  assertEquals(error.option, "rateLimit");
});

test("the types refuse a concurrency key function of the wrong payload", () => {
  const { federation } = setUp();
  federation.defineTask("typed", {
    schema,
    handler: () => {},
    concurrency: { key: ({ key }) => key, limit: 1 },
    rateLimit: { limit: 1, period: "PT1S", key: ({ key }) => key },
  });
  // Only type-checked, never run.
  const _wrong = () =>
    federation.defineTask("typed-wrong", {
      schema,
      handler: () => {},
      // @ts-expect-error: the payload has no accountId
      concurrency: { key: ({ accountId }) => accountId, limit: 1 },
    });
});

test("a concurrency key limited to 2 never runs 3 at once, and other keys run freely", async () => {
  const { federation, ctx } = setUp();
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const waits: MessageRetryingEvent[] = [];
  let done = 0;
  const all = deferred<void>();
  const task = federation.defineTask("limited", {
    schema,
    concurrency: { key: ({ key }) => key, limit: 2 },
    handler: async (_ctx, { key }) => {
      running.set(key, (running.get(key) ?? 0) + 1);
      most.set(key, Math.max(most.get(key) ?? 0, running.get(key)!));
      await new Promise((resolve) => setTimeout(resolve, 20));
      running.set(key, running.get(key)! - 1);
      if (++done === 30) all.resolve();
    },
    on: { retrying: (event) => void waits.push(event) },
  });
  await withWorkers(federation, async () => {
    for (let n = 0; n < 20; n++) await ctx.enqueueTask(task, { key: "a", n });
    for (let n = 0; n < 10; n++) await ctx.enqueueTask(task, { key: `other-${n}`, n });
    await within(all.promise, "30 runs", 60_000);
  });
  assertEquals(most.get("a"), 2);
  for (let n = 0; n < 10; n++) assertEquals(most.get(`other-${n}`), 1);
  assert(waits.length > 0, "some runs of key a waited");
  for (const event of waits) {
    assertEquals(event.reason, "wait");
    assertEquals(event.attempt, 0);
    assert(event.error instanceof RunPostponedError);
    assertEquals(event.error.waitFor, "concurrency");
  }
});

test("a task limited to 20 starts a second spreads its starts, spending no attempt", async () => {
  const { federation, ctx } = setUp();
  const starts: { n: number; at: number; attempt: number }[] = [];
  const all = deferred<void>();
  const task = federation.defineTask("paced", {
    schema,
    rateLimit: { limit: 20, period: { seconds: 1 } },
    handler: (tctx, { n }) => {
      starts.push({ n, at: performance.now(), attempt: tctx.task.attempt });
      if (starts.length === 30) all.resolve();
    },
  });
  let begun = 0;
  await withWorkers(federation, async () => {
    begun = performance.now();
    await ctx.enqueueTaskMany(task, Array.from({ length: 30 }, (_, n) => ({ key: "k", n })));
    await within(all.promise, "30 starts", 60_000);
  });
  // The i-th start was reserved 50 ms after the one before it, so it cannot
  // start before i × 50 ms (less the 5 ms a run may start early), however
  // late any of them runs.
  starts.sort((a, b) => a.at - b.at);
  for (let i = 0; i < starts.length; i++) {
    assert(starts[i].at - begun >= i * 50 - 10, `start ${i} came at ${starts[i].at - begun} ms`);
  }
  assert(starts.every((start) => start.attempt === 0));
});

test("a task without limits never reads their keys", async () => {
  const { kv, federation, ctx } = setUp();
  const all = deferred<void>();
  let count = 0;
  const task = federation.defineTask("free", {
    schema,
    handler: () => {
      if (++count === 5) all.resolve();
    },
  });
  await withWorkers(federation, async () => {
    for (let n = 0; n < 5; n++) await ctx.enqueueTask(task, { key: "a", n });
    await within(all.promise, "5 runs", 30_000);
  });
  assertEquals(kv.limitReads, 0);
});

test("a failed run of a task with concurrency gives its slot back", async () => {
  const { kv, federation, ctx } = setUp();
  const settled = deferred<void>();
  const task = federation.defineTask("failing", {
    schema,
    concurrency: { key: ({ key }) => key, limit: 1 },
    retryPolicy: () => null,
    handler: () => {
      throw new Error("boom");
    },
    on: { failed: () => settled.resolve() },
  });
  await withWorkers(federation, async () => {
    await ctx.enqueueTask(task, { key: "a", n: 1 });
    await within(settled.promise, "the failure", 30_000);
  });
  assertEquals(await kv.get(["fedwork", "task-concurrency", "failing", "a"]), { holders: [] });
});

test("waits are counted by fedwork.message.waited with their cause, and write no status", async () => {
  const meters = testMeters();
  const kv = new MemoryKvStore();
  const federation = createFederation<void>({
    kv,
    queue: new ParallelMessageQueue(new InProcessMessageQueue(), 4),
    manuallyStartQueue: true,
    meterProvider: meters.meterProvider,
  });
  const ctx = federation.createContext(base, undefined);
  let done = 0;
  const all = deferred<void>();
  const release = deferred<void>();
  const statuses: string[] = [];
  const task = federation.defineTask("metered", {
    schema,
    concurrency: { key: () => "one", limit: 1 },
    // One start a second: the second run's reserved start is a second
    // after the first's, however slow the machine, so it waits for it.
    rateLimit: { limit: 1, period: { seconds: 1 } },
    handler: async (_ctx, { n }) => {
      if (n === 0) await release.promise;
      if (++done === 3) all.resolve();
    },
    on: {
      retrying: async (event) => {
        statuses.push((await federation.getTaskStatus(event.messageId))?.state ?? "none");
        // The first run holds the key until another has waited for it.
        if ((event.error as RunPostponedError).waitFor === "concurrency") release.resolve();
      },
    },
  });
  try {
    await withWorkers(federation, async () => {
      await ctx.enqueueTaskMany(task, [0, 1, 2].map((n) => ({ key: "k", n })));
      await within(all.promise, "3 runs", 30_000);
    });
    const metrics = await meters.collect();
    const attributes = { "fedwork.message.type": "task", "fedwork.task.name": "metered" };
    const rate = count(metrics, MESSAGE_METRICS.waited, {
      ...attributes,
      "fedwork.wait.cause": "rate",
    });
    const concurrency = count(metrics, MESSAGE_METRICS.waited, {
      ...attributes,
      "fedwork.wait.cause": "concurrency",
    });
    // The second and third wait for their start (a second apart), then
    // for the first run's key.
    assert(rate >= 1, `rate waits: ${rate}`);
    assert(concurrency >= 1, `concurrency waits: ${concurrency}`);
    assert(statuses.length > 0 && statuses.every((state) => state !== "retrying"), `${statuses}`);
  } finally {
    await meters.shutdown();
  }
});
