// The failed-task store through the federation: what is kept when a task
// fails for good, listing, replay, discarding and retention.
import { assert, assertEquals, assertInstanceOf, assertRejects, test } from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { z } from "zod";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import { deferred, within as withTimeout } from "@fedify/fixture";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { PermanentError } from "../../processing/errors.ts";
import type { MessageEventType } from "../../processing/events.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import { FailedTaskNotFoundError, TaskValidationError } from "../../tasks/errors.ts";

const base = new URL("https://web.example/");

function federationWith(options: Partial<FederationOptions<void>> = {}): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new InProcessMessageQueue() },
    manuallyStartQueue: true,
    taskRetryPolicy: ({ attempts }) => attempts < 3 ? millisecondsToDuration(5) : null,
    ...options,
  });
}

/** Starts the task worker; `events(type, n)` waits for the n-th event of a type. */
function startWorker(federation: Federation<void>) {
  const counts = new Map<string, number>();
  const waiters: { type: string; n: number; resolve: () => void }[] = [];
  for (const type of ["completed", "failed", "retrying", "dropped"] as const) {
    federation.on(type, () => {
      counts.set(type, (counts.get(type) ?? 0) + 1);
      for (const waiter of waiters) {
        if (waiter.type === type && counts.get(type)! >= waiter.n) waiter.resolve();
      }
    });
  }
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  return {
    events(type: MessageEventType, n = 1): Promise<void> {
      if ((counts.get(type) ?? 0) >= n) return Promise.resolve();
      const { promise, resolve } = deferred();
      waiters.push({ type, n, resolve });
      return withTimeout(promise, `${n} ${type} event(s)`);
    },
    async stop() {
      controller.abort();
      await worker;
    },
  };
}

test("a failed task is listed, replayed and then completes, its vocabulary objects intact", async () => {
  const federation = federationWith();
  let fail = true;
  const seen: unknown[] = [];
  const relay = federation.defineTask("relay", {
    schema: z.object({ activity: z.instanceof(Create), note: z.string() }),
    handler(_ctx, { activity }) {
      seen.push(activity);
      if (fail) throw new PermanentError("the remote server is gone");
    },
  });
  const worker = startWorker(federation);
  try {
    const activity = new Create({
      id: new URL("https://web.example/activities/1"),
      object: new Note({ content: "Hello" }),
    });
    const ctx = federation.createContext(base, undefined);
    const { messageId } = await ctx.enqueueTask(relay, { activity, note: "n" }, {
      orderingKey: "alice",
    }) as { messageId: string };
    await worker.events("failed");

    const page = await federation.listFailedTasks();
    assertEquals(page.records.length, 1);
    assertEquals(page.cursor, undefined);
    const record = page.records[0];
    assertEquals(record.id, messageId);
    assertEquals(record.taskName, "relay");
    assertEquals(record.status, "failed");
    assertEquals(record.reason, "permanent");
    assertEquals(record.attempts, 1);
    assertEquals(record.orderingKey, "alice");
    assertEquals(record.error?.name, "PermanentError");
    assertEquals(record.error?.message, "the remote server is gone");
    assert(record.error?.stack?.includes("PermanentError"));
    assertInstanceOf(record.enqueuedAt, Date);
    assert(record.finishedAt.getTime() >= record.enqueuedAt.getTime());
    assertEquals(await federation.countFailedTasks(), new Map([["relay", 1]]));

    const details = await federation.getFailedTask(messageId);
    const payload = details?.payload as { activity: Create; note: string };
    assertInstanceOf(payload.activity, Create);
    assertInstanceOf(await payload.activity.getObject(), Note);
    assertEquals(payload.note, "n");

    fail = false;
    assertEquals(await federation.retryFailedTask(messageId), { status: "enqueued", messageId });
    await worker.events("completed");
    assertEquals(seen.length, 2);
    assertInstanceOf(seen[1], Create);
    assertEquals(await federation.getFailedTask(messageId), undefined);
    assertEquals((await federation.listFailedTasks()).records, []);
    assertEquals(await federation.countFailedTasks(), new Map());
    await assertRejects(() => federation.retryFailedTask(messageId), FailedTaskNotFoundError);
  } finally {
    await worker.stop();
  }
});

test("a task whose retries are exhausted is kept with its attempts", async () => {
  const federation = federationWith();
  const broken = federation.defineTask("broken", {
    schema: z.object({ n: z.number() }),
    handler() {
      throw new TypeError("always");
    },
  });
  const worker = startWorker(federation);
  try {
    await federation.createContext(base, undefined).enqueueTask(broken, { n: 1 });
    await worker.events("failed");
    const [record] = (await federation.listFailedTasks({ taskName: "broken" })).records;
    assertEquals(record.reason, "exhausted");
    assertEquals(record.attempts, 3);
    assertEquals(record.error?.name, "TypeError");
  } finally {
    await worker.stop();
  }
});

test("failed tasks are listed newest first, by task, a page at a time, and discarded", async () => {
  const federation = federationWith();
  const a = federation.defineTask("a", {
    schema: z.object({ i: z.number() }),
    handler() {
      throw new PermanentError("a");
    },
  });
  const b = federation.defineTask("b", {
    schema: z.object({}),
    handler() {
      throw new PermanentError("b");
    },
  });
  const worker = startWorker(federation);
  try {
    const ctx = federation.createContext(base, undefined);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await ctx.enqueueTask(a, { i }) as { messageId: string }).messageId);
      await worker.events("failed", i + 1);
      // Distinct finish times make the order observable.
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    await ctx.enqueueTask(b, {});
    await worker.events("failed", 6);
    assertEquals(await federation.countFailedTasks(), new Map([["a", 5], ["b", 1]]));
    const first = await federation.listFailedTasks({ taskName: "a", limit: 2 });
    assertEquals(first.records.map((r) => r.id), [ids[4], ids[3]]);
    const second = await federation.listFailedTasks({
      taskName: "a",
      limit: 2,
      cursor: first.cursor,
    });
    assertEquals(second.records.map((r) => r.id), [ids[2], ids[1]]);
    const third = await federation.listFailedTasks({
      taskName: "a",
      limit: 2,
      cursor: second.cursor,
    });
    assertEquals(third.records.map((r) => r.id), [ids[0]]);
    assertEquals(third.cursor, undefined);
    assertEquals((await federation.listFailedTasks()).records.length, 6);
    await assertRejects(() => federation.listFailedTasks({ limit: 0 }), RangeError);
    await assertRejects(() => federation.listFailedTasks({ cursor: "nonsense" }), TypeError);

    assertEquals(await federation.discardFailedTask(ids[0]), true);
    assertEquals(await federation.discardFailedTask(ids[0]), false);
    assertEquals(await federation.countFailedTasks(), new Map([["a", 4], ["b", 1]]));
  } finally {
    await worker.stop();
  }
});

test("a replay is validated against the task's current schema", async () => {
  const federation = federationWith();
  let strict = false;
  const parse = federation.defineTask("parse", {
    schema: z.object({ n: z.number() }).refine(({ n }) => !strict || n > 10, "n is too small"),
    handler() {
      throw new PermanentError("no");
    },
  });
  const worker = startWorker(federation);
  try {
    const { messageId } = await federation.createContext(base, undefined)
      .enqueueTask(parse, { n: 1 }) as { messageId: string };
    await worker.events("failed");
    strict = true;
    await assertRejects(() => federation.retryFailedTask(messageId), TaskValidationError);
    // The record is kept for another try (or a discard).
    assertEquals((await federation.getFailedTask(messageId))?.id, messageId);
  } finally {
    await worker.stop();
  }
});

test("failedTaskRetention 0 keeps no failed task; completedTaskRetention keeps completed ones", async () => {
  const federation = federationWith({
    failedTaskRetention: 0,
    completedTaskRetention: { hours: 1 },
  });
  const flip = federation.defineTask("flip", {
    schema: z.object({ ok: z.boolean() }),
    handler(_ctx, { ok }) {
      if (!ok) throw new PermanentError("not ok");
    },
  });
  const worker = startWorker(federation);
  try {
    const ctx = federation.createContext(base, undefined);
    await ctx.enqueueTask(flip, { ok: false });
    await worker.events("failed");
    const { messageId } = await ctx.enqueueTask(flip, { ok: true }) as { messageId: string };
    await worker.events("completed");
    assertEquals((await federation.listFailedTasks()).records, []);
    const completed = await federation.listCompletedTasks();
    assertEquals(completed.records.map((r) => [r.id, r.status, r.attempts]), [
      [messageId, "completed", 1],
    ]);
  } finally {
    await worker.stop();
  }
});

test("a failed task is forgotten after failedTaskRetention", async () => {
  const federation = federationWith({ failedTaskRetention: { milliseconds: 100 } });
  const doomed = federation.defineTask("doomed", {
    schema: z.object({}),
    handler() {
      throw new PermanentError("no");
    },
  });
  const worker = startWorker(federation);
  try {
    await federation.createContext(base, undefined).enqueueTask(doomed, {});
    await worker.events("failed");
    assertEquals((await federation.listFailedTasks()).records.length, 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assertEquals((await federation.listFailedTasks()).records.length, 0);
  } finally {
    await worker.stop();
  }
});
