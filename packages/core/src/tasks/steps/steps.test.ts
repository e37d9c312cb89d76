// Durable steps end to end in one process: a real in-process queue and a
// MemoryKvStore, the handler run again after retries, sleeps and waits.
import { assert, assertEquals, test, waitUntil, withLogs } from "@fedify/fixture";
import { z } from "zod";
import { createFederation, type Federation } from "../../federation/federation.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import type { TaskStatus } from "../../operator/status/store.ts";
import { stepStateKey } from "./state.ts";

const base = new URL("https://example.com/");

function federationOn(
  queue: InProcessMessageQueue,
  kv = new MemoryKvStore(),
): Federation<void> {
  return createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    taskRetryPolicy: ({ attempts }) => attempts < 5 ? millisecondsToDuration(10) : null,
  });
}

async function finalStatus(federation: Federation<void>, id: string): Promise<TaskStatus> {
  let status: TaskStatus | undefined;
  await waitUntil(async () => {
    status = await federation.getTaskStatus(id);
    return status?.state === "completed" || status?.state === "failed" ||
      status?.state === "cancelled";
  }, { what: () => `task ${id} to end; last ${status?.state}` });
  return status!;
}

test("recorded steps are not run again when a later step fails and the task retries", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const runs = { a: 0, b: 0, handler: 0 };
  const task = federation.defineTask("steps-retry", {
    schema: z.object({}),
    handler: async (ctx) => {
      runs.handler++;
      const a = await ctx.step.run("a", () => {
        runs.a++;
        return { at: new Date(0), tags: new Map([["x", 1]]) };
      });
      const b = await ctx.step.run("b", () => {
        runs.b++;
        if (runs.b < 3) throw new Error("flaky");
        return 2;
      });
      assert(a.at instanceof Date && a.tags instanceof Map, "Date and Map survive the record");
      return { a: a.tags.get("x") ?? 0, b };
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await finalStatus(federation, enqueued.messageId);
    assertEquals(status.state, "completed");
    assertEquals(status.result, { a: 1, b: 2 });
  });
  assertEquals(runs, { a: 1, b: 3, handler: 3 });
});

test("a step's own retry policy retries it without spending the task's attempts", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  let tries = 0;
  const attempts: number[] = [];
  const task = federation.defineTask("steps-own-retry", {
    schema: z.object({}),
    retryPolicy: () => null,
    handler: async (ctx) => {
      attempts.push(ctx.task.attempt);
      return await ctx.step.run("flaky", () => {
        if (++tries < 4) throw new Error("not yet");
        return tries;
      }, { retry: ({ attempts }) => attempts < 5 ? millisecondsToDuration(5) : null });
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await finalStatus(federation, enqueued.messageId);
    assertEquals(status.state, "completed");
    assertEquals(status.result, 4);
  });
  assertEquals(attempts, [0, 0, 0, 0]);
});

test("a durable sleep ends the run and continues from the records, no attempt spent", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new MemoryKvStore();
  const federation = federationOn(queue, kv);
  const seen: string[] = [];
  const task = federation.defineTask("steps-sleep", {
    schema: z.object({}),
    handler: async (ctx) => {
      const before = await ctx.step.run("before", () => {
        seen.push("before");
        return performance.now();
      });
      await ctx.step.sleep("nap", { milliseconds: 200 });
      seen.push(`after@${ctx.task.attempt}`);
      return performance.now() - before;
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await finalStatus(federation, enqueued.messageId);
    assertEquals(status.state, "completed");
    assert((status.result as number) >= 190, `slept ${status.result} ms`);
  });
  assertEquals(seen, ["before", "after@0"]);
  await waitUntil(async () => await kv.get(stepStateKey(enqueued.messageId)) === undefined, {
    what: "the step records to be deleted after the task completed",
  });
});

test("waitForEvent resumes with the data sent, sees an early event, and times out to null", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const task = federation.defineTask("steps-wait", {
    schema: z.object({ key: z.string(), timeoutMs: z.number() }),
    handler: async (ctx, data) => {
      const got = await ctx.step.waitForEvent<{ at: Date }>("w", {
        event: "approved",
        key: data.key,
        timeout: { milliseconds: data.timeoutMs },
      });
      return got == null ? "timeout" : got.at.toISOString();
    },
  });
  const ctx = federation.createContext(base, undefined);
  await withWorkers(federation, async () => {
    const waiting = await ctx.enqueueTask(task, { key: "k1", timeoutMs: 60_000 });
    assert(waiting.status === "enqueued");
    await waitUntil(async () => {
      const status = await federation.getTaskStatus(waiting.messageId);
      return status?.state === "retrying";
    }, { what: "the task to wait" });
    const sent = await federation.sendEvent("approved", {
      key: "k1",
      data: { at: new Date("2026-01-01T00:00:00Z") },
    });
    assertEquals(sent.resumed, 1);
    assertEquals(
      (await finalStatus(federation, waiting.messageId)).result,
      "2026-01-01T00:00:00.000Z",
    );

    await ctx.sendEvent("approved", { key: "k2", data: { at: new Date(0) } });
    const early = await ctx.enqueueTask(task, { key: "k2", timeoutMs: 60_000 });
    assert(early.status === "enqueued");
    assertEquals(
      (await finalStatus(federation, early.messageId)).result,
      new Date(0).toISOString(),
    );

    const late = await ctx.enqueueTask(task, { key: "k3", timeoutMs: 100 });
    assert(late.status === "enqueued");
    assertEquals((await finalStatus(federation, late.messageId)).result, "timeout");
  });
});

test("invoke enqueues a child task and returns its typed result, or throws its failure", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  let childRuns = 0;
  let afterRuns = 0;
  const child = federation.defineTask("steps-child", {
    schema: z.object({ n: z.number() }),
    retryPolicy: () => null,
    handler: (_ctx, data) => {
      childRuns++;
      if (data.n < 0) throw new Error("negative");
      return { doubled: data.n * 2 };
    },
  });
  const parent = federation.defineTask("steps-parent", {
    schema: z.object({ n: z.number() }),
    handler: async (ctx, data) => {
      let result: { doubled: number };
      try {
        result = await ctx.step.invoke("double", child, { n: data.n });
      } catch (error) {
        return error instanceof Error ? error.name : "?";
      }
      // Fails once: the retry replays the invoke from its record, without a
      // second child.
      await ctx.step.run("after", () => {
        if (afterRuns++ === 0) throw new Error("once");
      });
      return result.doubled;
    },
  });
  const ctx = federation.createContext(base, undefined);
  await withWorkers(federation, async () => {
    const ok = await ctx.enqueueTask(parent, { n: 21 });
    assert(ok.status === "enqueued");
    assertEquals((await finalStatus(federation, ok.messageId)).result, 42);
    const bad = await ctx.enqueueTask(parent, { n: -1 });
    assert(bad.status === "enqueued");
    assertEquals((await finalStatus(federation, bad.messageId)).result, "TaskStepInvokeError");
  });
  assertEquals(childRuns, 2);
});

test("a duplicate step id, and records that no longer match the code, fail naming the step", async () => {
  await using queue = new InProcessMessageQueue();
  const kv = new MemoryKvStore();
  const federation = federationOn(queue, kv);
  const duplicate = federation.defineTask("steps-duplicate", {
    schema: z.object({}),
    handler: async (ctx) => {
      await ctx.step.run("same", () => 1);
      await ctx.step.run("same", () => 2);
    },
  });
  let renamedRan = false;
  const renamed = federation.defineTask("steps-renamed", {
    schema: z.object({}),
    handler: async (ctx) => {
      await ctx.step.run("new-name", () => {
        renamedRan = true;
      });
    },
  });
  const ctx = federation.createContext(base, undefined);
  await withWorkers(federation, async () => {
    const dup = await ctx.enqueueTask(duplicate, {});
    assert(dup.status === "enqueued");
    const dupStatus = await finalStatus(federation, dup.messageId);
    assertEquals(dupStatus.state, "failed");
    assert(dupStatus.error?.message.includes('"same" is used twice'), dupStatus.error?.message);

    const old = await ctx.enqueueTask(renamed, {}, { delay: { seconds: 1 } });
    assert(old.status === "enqueued");
    // What an older deploy recorded for this task.
    await kv.set(stepStateKey(old.messageId), {
      v: 1,
      gen: 0,
      steps: [{ id: "old-name", kind: "run", done: true, at: 0 }],
    });
    const oldStatus = await finalStatus(federation, old.messageId);
    assertEquals(oldStatus.state, "failed");
    assert(oldStatus.error?.message.includes('"old-name"'), oldStatus.error?.message);
    assert(oldStatus.error?.message.includes('"new-name"'), oldStatus.error?.message);
  });
  assertEquals(renamedRan, false);
});

test("cancelling a sleeping task ends it without running its later steps", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  let after = false;
  const task = federation.defineTask("steps-cancel", {
    schema: z.object({}),
    handler: async (ctx) => {
      await ctx.step.sleep("long", { days: 3 });
      after = true;
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    await waitUntil(
      async () => (await federation.getTaskStatus(enqueued.messageId))?.state === "retrying",
      {
        what: "the task to sleep",
      },
    );
    const result = await federation.cancelTask(enqueued.messageId);
    assertEquals(result.status, "cancelled");
    assertEquals((await federation.getTaskStatus(enqueued.messageId))?.state, "cancelled");
  });
  assertEquals(after, false);
});

test("a step result over the record limit fails the task with an error naming the step", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  let runs = 0;
  const task = federation.defineTask("steps-too-large", {
    schema: z.object({}),
    handler: async (ctx) => {
      await ctx.step.run("huge", () => {
        runs++;
        return "x".repeat(100 * 1024);
      });
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await finalStatus(federation, enqueued.messageId);
    assertEquals(status.state, "failed");
    assert(status.error?.message.includes('step "huge"'), status.error?.message);
    assert(status.error?.message.includes("cannot be recorded"), status.error?.message);
  });
  // A permanent error: not retried.
  assertEquals(runs, 1);
});

test("the copy of a woken task due at its timeout is dropped without running or an event", async () => {
  await withLogs(async (records) => {
    await using queue = new InProcessMessageQueue();
    const federation = federationOn(queue);
    let runs = 0;
    const events: string[] = [];
    const task = federation.defineTask("steps-stale", {
      schema: z.object({}),
      on: {
        completed: () => void events.push("completed"),
        dropped: () => void events.push("dropped"),
      },
      handler: async (ctx) => {
        runs++;
        return await ctx.step.waitForEvent<string>("w", {
          event: "go",
          key: "stale",
          timeout: { milliseconds: 300 },
        });
      },
    });
    const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
    assert(enqueued.status === "enqueued");
    await withWorkers(federation, async () => {
      await waitUntil(
        async () => (await federation.getTaskStatus(enqueued.messageId))?.state === "retrying",
        {
          what: "the task to wait",
        },
      );
      assertEquals((await federation.sendEvent("go", { key: "stale", data: "now" })).resumed, 1);
      assertEquals((await finalStatus(federation, enqueued.messageId)).result, "now");
      await waitUntil(
        () =>
          records.some((record) =>
            record.message.join("").startsWith("Dropped a stale copy of message")
          ),
        { what: "the copy due at the timeout to be dropped" },
      );
    });
    assertEquals(runs, 2);
    assertEquals(events, ["completed"]);
    assertEquals((await federation.getTaskStatus(enqueued.messageId))?.state, "completed");
  });
});

test("a failed task's status names the failed step, and retryFailedTask() replays from it", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const runs = { a: 0, b: 0 };
  let broken = true;
  const task = federation.defineTask("steps-replay", {
    schema: z.object({}),
    retryPolicy: () => null,
    handler: async (ctx) => {
      await ctx.step.run("a", () => ++runs.a);
      return await ctx.step.run("b", () => {
        runs.b++;
        if (broken) throw new Error("the remote server is down");
        return "done";
      });
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const failed = await finalStatus(federation, enqueued.messageId);
    assertEquals(failed.state, "failed");
    assertEquals(failed.steps?.current, { id: "b", kind: "run", phase: "running" });
    assertEquals(failed.steps?.recorded, ["a"]);
    broken = false;
    await federation.retryFailedTask(enqueued.messageId);
    await waitUntil(
      async () => (await federation.getTaskStatus(enqueued.messageId))?.state === "completed",
      {
        what: "the replayed task to complete",
      },
    );
    assertEquals((await federation.getTaskStatus(enqueued.messageId))?.result, "done");
  });
  assertEquals(runs, { a: 1, b: 2 });
});

test("a task's time limit applies to each run, not to its sleep", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    taskTimeout: { milliseconds: 400 },
    taskRetryPolicy: () => null,
  });
  const task = federation.defineTask("steps-timed", {
    schema: z.object({}),
    handler: async (ctx) => {
      const started = await ctx.step.run("start", () => Date.now());
      // Twice the time limit: slept outside any run.
      await ctx.step.sleep("nap", { milliseconds: 800 });
      return Date.now() - started;
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  await withWorkers(federation, async () => {
    const status = await finalStatus(federation, enqueued.messageId);
    assertEquals(status.state, "completed", status.error?.message);
    assert((status.result as number) >= 800, `slept ${status.result} ms`);
  });
});
