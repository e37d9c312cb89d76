// Recurring tasks: tick arithmetic, and schedules run by federations that
// share a store and a queue the way worker processes share durable ones.
// The two-process test on a durable backend is in @fedwork/sqlite.
import { assert, assertEquals, assertRejects, assertThrows, test } from "@fedify/fixture";
import { z } from "zod";
import { createFederationBuilder } from "../../federation/builder.ts";
import type { Federation } from "../../federation/federation.ts";
import { deferred, within as withTimeout } from "@fedify/fixture";
import type { KvStore } from "../../kv/kv-store.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import { resolveTiming } from "./timing.ts";
import { latestTick, nextTick } from "./timing.ts";

const origin = "https://web.example";

test("interval ticks are counted from the anchor, and none is at or before it", () => {
  const timing = resolveTiming({ every: { seconds: 10 } });
  assertEquals(timing, { everyMs: 10_000 });
  assertEquals(latestTick(timing, 1_000, 1_000), undefined);
  assertEquals(latestTick(timing, 1_000, 10_999), undefined);
  assertEquals(latestTick(timing, 1_000, 11_000), 11_000);
  assertEquals(latestTick(timing, 1_000, 55_000), 51_000);
  assertEquals(nextTick(timing, 1_000, 1_000), 11_000);
  assertEquals(nextTick(timing, 1_000, 11_000), 21_000);
  assertEquals(nextTick(timing, 1_000, 0), 11_000);
});

test("cron ticks follow the pattern in its time zone", () => {
  const timing = resolveTiming({ cron: "0 3 * * *", timezone: "Europe/Paris" });
  const anchor = Date.parse("2025-01-01T00:00:00Z");
  // 03:00 in Paris is 02:00 UTC in winter.
  assertEquals(
    new Date(nextTick(timing, anchor, anchor)!).toISOString(),
    "2025-01-01T02:00:00.000Z",
  );
  assertEquals(
    new Date(latestTick(timing, anchor, Date.parse("2025-01-03T12:00:00Z"))!).toISOString(),
    "2025-01-03T02:00:00.000Z",
  );
  assertEquals(latestTick(timing, anchor, Date.parse("2025-01-01T01:00:00Z")), undefined);
  // A tick exactly now is due now.
  const tick = Date.parse("2025-01-02T02:00:00Z");
  assertEquals(latestTick(timing, anchor, tick), tick);
  // UTC by default.
  const utc = resolveTiming({ cron: "0 3 * * *" });
  assertEquals(
    new Date(nextTick(utc, anchor, anchor)!).toISOString(),
    "2025-01-01T03:00:00.000Z",
  );
});

test("malformed schedule timings are rejected with what is wrong", () => {
  assertThrows(() => resolveTiming({} as never), TypeError, "exactly one of every");
  assertThrows(
    () => resolveTiming({ every: { seconds: 1 }, cron: "* * * * *" } as never),
    TypeError,
    "exactly one of every",
  );
  assertThrows(() => resolveTiming({ every: { seconds: 0 } }), RangeError, "at least one");
  assertThrows(() => resolveTiming({ every: { seconds: -1 } }), RangeError);
  assertThrows(() => resolveTiming({ cron: "every day" }), TypeError, "is invalid");
  assertThrows(
    () => resolveTiming({ cron: "* * * * *", timezone: "Nowhere/Zone" }),
    TypeError,
    "Nowhere/Zone",
  );
  assertThrows(
    () => resolveTiming({ every: { seconds: 1 }, timezone: "UTC" } as never),
    TypeError,
    "cron schedules only",
  );
});

/** An app: a builder with one task that records the tick of each run. */
function app(everyMs: number) {
  const builder = createFederationBuilder<void>();
  const runs: { tick: number; id: string }[] = [];
  let onRun = () => {};
  const ping = builder.defineTask("ping", {
    schema: z.object({ target: z.string() }),
    handler(ctx) {
      assertEquals(ctx.task.schedule?.id.startsWith("ping:"), true);
      runs.push({ tick: ctx.task.schedule!.tick.getTime(), id: ctx.task.id });
      onRun();
    },
  });
  return {
    ping,
    runs,
    everyMs,
    /** Resolves once `n` runs have happened. */
    waitForRuns(n: number): Promise<void> {
      if (runs.length >= n) return Promise.resolve();
      const { promise, resolve } = deferred();
      onRun = () => {
        if (runs.length >= n) resolve();
      };
      return withTimeout(promise, `${n} runs`);
    },
    build(kv: KvStore, queue: MessageQueue): Promise<Federation<void>> {
      return builder.build({ kv, queue: { task: queue }, manuallyStartQueue: true, origin });
    },
  };
}

function startWorker(federation: Federation<void>) {
  const controller = new AbortController();
  const done = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  return async () => {
    controller.abort();
    await done;
  };
}

test("two workers sharing a store and a queue run each tick exactly once", async () => {
  const kv = new MemoryKvStore();
  const queue = new InProcessMessageQueue();
  const ping = app(120);
  const first = await ping.build(kv, queue);
  const second = await ping.build(kv, queue);
  const stops = [startWorker(first), startWorker(second)];
  try {
    const schedule = await first.scheduleTask(ping.ping, { target: "a" }, {
      every: { milliseconds: ping.everyMs },
    });
    await ping.waitForRuns(6);
    for (const stop of stops) await stop();
    const anchor = schedule.createdAt.getTime();
    const ticks = ping.runs.map(({ tick }) => (tick - anchor) / ping.everyMs);
    // Each tick runs once, in order, on one of the two workers.  A loaded
    // machine may let a tick pass unseen (the next run catches it up, see
    // below), so the ticks need not be consecutive.
    for (let i = 0; i < ticks.length; i++) {
      assert(Number.isInteger(ticks[i]) && ticks[i] >= 1, `ticks ${ticks}`);
      if (i > 0) assert(ticks[i] > ticks[i - 1], `a tick ran twice or out of order: ${ticks}`);
    }
  } finally {
    for (const stop of stops) await stop();
  }
});

test("ticks missed while no worker ran are caught up with one run, not a burst", async () => {
  const kv = new MemoryKvStore();
  const queue = new InProcessMessageQueue();
  const ping = app(100);
  const federation = await ping.build(kv, queue);
  const schedule = await federation.scheduleTask(ping.ping, { target: "a" }, {
    every: { milliseconds: ping.everyMs },
  });
  // Five ticks pass with no worker.
  await new Promise((resolve) => setTimeout(resolve, 560));
  const stop = startWorker(federation);
  await ping.waitForRuns(1);
  await stop();
  // The first run was for the latest missed tick (the fifth, or a later one
  // if the machine was slow to start the worker); none of the missed ticks
  // before it ran.
  const anchor = schedule.createdAt.getTime();
  const ticks = ping.runs.map(({ tick }) => (tick - anchor) / ping.everyMs);
  assert(ticks[0] >= 5, `the first run was for tick ${ticks[0]}`);
  assertEquals(new Set(ticks).size, ticks.length, `ticks ${ticks}`);
  const [listed] = await federation.listSchedules();
  assertEquals(listed.lastRunAt!.getTime(), ping.runs.at(-1)!.tick);
});

test("schedules survive a restart and are listed, replaced and removed", async () => {
  const kv = new MemoryKvStore();
  const queue = new InProcessMessageQueue();
  const ping = app(80);
  const before = await ping.build(kv, queue);
  const created = await before.scheduleTask(ping.ping, { target: "a" }, {
    every: { milliseconds: ping.everyMs },
  });
  assert(created.id.startsWith("ping:"));
  assertEquals(created.taskName, "ping");
  assertEquals(created.every?.total({ unit: "milliseconds" }), 80);
  assertEquals(created.lastRunAt, undefined);
  assertEquals(created.nextRunAt?.getTime(), created.createdAt.getTime() + 80);
  // The same task and payload again: the same schedule, not a second one.
  const again = await before.scheduleTask(ping.ping, { target: "a" }, {
    every: { milliseconds: ping.everyMs },
  });
  assertEquals(again.id, created.id);
  assertEquals(again.createdAt, created.createdAt);
  await before.scheduleTask(ping.ping, { target: "b" }, {
    cron: "0 3 * * *",
    timezone: "Europe/Paris",
    id: "nightly",
  });

  // A new process over the same store.
  const after = await ping.build(kv, queue);
  const listed = await after.listSchedules();
  assertEquals(
    listed.map((s) => [s.id, s.taskName, s.cron, s.timezone]),
    [
      ["nightly", "ping", "0 3 * * *", "Europe/Paris"],
      [created.id, "ping", undefined, undefined],
    ].sort((a, b) => a[0]! < b[0]! ? -1 : 1),
  );
  const stop = startWorker(after);
  try {
    await ping.waitForRuns(2);
    assertEquals(await after.unscheduleTask(created.id), true);
    assertEquals(await after.unscheduleTask(created.id), false);
    const count = ping.runs.length;
    await new Promise((resolve) => setTimeout(resolve, 4 * ping.everyMs));
    // At most one run that was already claimed when it was removed.
    assert(ping.runs.length <= count + 1, `${ping.runs.length} runs after ${count}`);
    assertEquals((await after.listSchedules()).map((s) => s.id), ["nightly"]);
  } finally {
    await stop();
  }
});

test("scheduleTask needs a KvStore with cas() and a base URL", async () => {
  const ping = app(1000);
  const memory = new MemoryKvStore();
  const withoutCas: KvStore = {
    get: (key) => memory.get(key),
    set: (key, value, options) => memory.set(key, value, options),
    delete: (key) => memory.delete(key),
    list: (prefix) => memory.list(prefix),
  };
  const federation = await ping.build(withoutCas, new InProcessMessageQueue());
  await assertRejects(
    () => federation.scheduleTask(ping.ping, { target: "a" }, { every: { seconds: 1 } }),
    TypeError,
    "cas()",
  );
  const builder = createFederationBuilder<void>();
  const task = builder.defineTask("t", { schema: z.object({}), handler() {} });
  const noOrigin = await builder.build({
    kv: new MemoryKvStore(),
    queue: new InProcessMessageQueue(),
    manuallyStartQueue: true,
  });
  await assertRejects(
    () => noOrigin.scheduleTask(task, {}, { every: { seconds: 1 } }),
    TypeError,
    "base URL",
  );
  const schedule = await noOrigin.scheduleTask(task, {}, {
    every: { seconds: 1 },
    baseUrl: "https://other.example/path",
  });
  assertEquals(schedule.taskName, "t");
});
