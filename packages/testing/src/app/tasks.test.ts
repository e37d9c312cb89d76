// Tasks in the test federation: recorded on enqueue, run on demand, through
// the real validation, codec, retry policy and status records.
import {
  createExponentialBackoffPolicy,
  TaskPayloadEncodingError,
  TaskValidationError,
} from "@fedwork/core";
import { Create, Note, Person } from "@fedify/vocab";
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  deferred,
  test,
  within,
} from "@fedify/fixture";
import { z } from "zod";
import { createFederation } from "./mod.ts";

const origin = new URL("https://example.com/");

test("an enqueued task waits in the queue until runPendingTasks() runs it", async () => {
  const federation = createFederation<{ tag: string }>({ contextData: { tag: "worker" } });
  const seen: string[] = [];
  const greet = federation.defineTask("greet", {
    schema: z.object({ name: z.string() }),
    handler: (ctx, { name }) => void seen.push(`${name} ${ctx.data.tag}`),
  });
  const ctx = federation.createContext(origin, { tag: "web" });
  const result = await ctx.enqueueTask(greet, { name: "alice" });
  assertEquals(result.status, "enqueued");
  assertEquals(seen, []);
  assertEquals(federation.pendingMessages.length, 1);
  assertEquals(federation.pendingMessages[0].message.taskName, "greet");
  const runs = await federation.runPendingTasks();
  assertEquals(seen, ["alice worker"]);
  assertEquals(runs.map((run) => [run.taskName, run.outcome, run.attempt]), [
    ["greet", "completed", 0],
  ]);
  assert(result.status === "enqueued" && runs[0].messageId === result.messageId);
  assertEquals(federation.pendingMessages.length, 0);
  assertEquals(await federation.runPendingTasks(), []);
});

test("enqueueTask refuses a payload its schema or the codec refuses, as in production", async () => {
  const federation = createFederation<void>();
  const task = federation.defineTask("store", {
    schema: z.object({ name: z.string(), extra: z.unknown().optional() }),
    handler() {},
  });
  const ctx = federation.createContext(origin, undefined);
  await assertRejects(() => ctx.enqueueTask(task, { name: 42 } as never), TaskValidationError);
  await assertRejects(
    () => ctx.enqueueTask(task, { name: "a", extra: () => 1 }),
    TaskPayloadEncodingError,
  );
  assertEquals(federation.pendingMessages.length, 0);
});

test("a payload goes through the task codec: the handler gets dates and vocabulary objects back", async () => {
  const federation = createFederation<void>();
  let received: { at: Date; activity: Create } | undefined;
  const archive = federation.defineTask("archive", {
    schema: z.object({ at: z.date(), activity: z.instanceof(Create) }),
    handler: (_ctx, data) => void (received = data),
  });
  const at = new Date("2026-01-02T03:04:05Z");
  const activity = new Create({
    id: new URL("https://example.com/c/1"),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({ content: "hello" }),
  });
  await federation.createContext(origin, undefined).enqueueTask(archive, { at, activity });
  await federation.runPendingTasks();
  assertInstanceOf(received?.at, Date);
  assertEquals(received.at.getTime(), at.getTime());
  assertInstanceOf(received.activity, Create);
  assert(received.activity !== activity, "the handler got a decoded copy");
  assertEquals(received.activity.id?.href, "https://example.com/c/1");
});

test("a failing task is retried by its retry policy when the clock reaches the retry", async () => {
  const federation = createFederation<void>();
  const attempts: number[] = [];
  const flaky = federation.defineTask("flaky", {
    schema: z.object({}),
    retryPolicy: createExponentialBackoffPolicy({
      initialDelay: { seconds: 30 },
      maxAttempts: 3,
      jitter: false,
    }),
    handler(ctx) {
      attempts.push(ctx.task.attempt);
      if (ctx.task.attempt < 2) throw new Error("not yet");
    },
  });
  await federation.createContext(origin, undefined).enqueueTask(flaky, {});
  const first = await federation.runPendingTasks();
  assertEquals(first.map((run) => run.outcome), ["retrying"]);
  assertEquals(attempts, [0]);
  // The retry is not due yet.
  assertEquals(await federation.runPendingTasks(), []);
  assertEquals(federation.pendingMessages.length, 1);
  const later = await federation.clock.advance({ hours: 1 });
  assertEquals(later.map((run) => [run.attempt, run.outcome]), [[1, "retrying"], [2, "completed"]]);
  assertEquals(attempts, [0, 1, 2]);
});

test("a task that fails for good ends as failed, with its error in the run", async () => {
  const federation = createFederation<void>();
  const doomed = federation.defineTask("doomed", {
    schema: z.object({}),
    retryPolicy: () => null,
    handler() {
      throw new Error("always");
    },
  });
  const enqueued = await federation.createContext(origin, undefined).enqueueTask(doomed, {});
  const [run] = await federation.runPendingTasks();
  assertEquals(run.outcome, "failed");
  assert(run.event.type === "failed");
  assertEquals((run.event.error as Error).message, "always");
  assert(enqueued.status === "enqueued");
  const status = await federation.getTaskStatus(enqueued.messageId);
  assertEquals(status?.state, "failed");
});

test("a task's result and progress are in its status record", async () => {
  const federation = createFederation<void>();
  const resize = federation.defineTask("resize", {
    schema: z.object({ album: z.string() }),
    async handler(ctx, { album }) {
      await ctx.task.reportProgress({ percent: 50, data: { step: "halfway" } });
      return { album, sizes: [64, 256] };
    },
  });
  const enqueued = await federation.createContext(origin, undefined)
    .enqueueTask(resize, { album: "summer" });
  assert(enqueued.status === "enqueued");
  assertEquals((await federation.getTaskStatus(resize, enqueued.messageId))?.state, "queued");
  await federation.runPendingTasks();
  const status = await federation.getTaskStatus(resize, enqueued.messageId);
  assertEquals(status?.state, "completed");
  assertEquals(status?.result, { album: "summer", sizes: [64, 256] });
  assertEquals(status?.progress?.percent, 50);
  assertEquals(status?.progress?.data, { step: "halfway" });
});

test("a cancelled queued task does not run", async () => {
  const federation = createFederation<void>();
  let ran = false;
  const task = federation.defineTask("never", {
    schema: z.object({}),
    handler: () => void (ran = true),
  });
  const enqueued = await federation.createContext(origin, undefined)
    .enqueueTask(task, {}, { delay: { minutes: 1 } });
  assert(enqueued.status === "enqueued");
  const cancelled = await federation.cancelTask(enqueued.messageId, { reason: "changed my mind" });
  assertEquals(cancelled.status, "cancelled");
  const runs = await federation.clock.advance({ minutes: 1 });
  assertEquals(ran, false);
  assertEquals(runs.map((run) => run.outcome), ["cancelled"]);
  assertEquals((await federation.getTaskStatus(enqueued.messageId))?.state, "cancelled");
});

test("a delayed task runs when the clock reaches its delay, not before", async () => {
  const federation = createFederation<void>();
  const ran: number[] = [];
  const remind = federation.defineTask("remind", {
    schema: z.object({ n: z.number() }),
    handler: (_ctx, { n }) => void ran.push(n),
  });
  const ctx = federation.createContext(origin, undefined);
  await ctx.enqueueTask(remind, { n: 2 }, { delay: { minutes: 10 } });
  await ctx.enqueueTask(remind, { n: 1 }, { delay: { minutes: 5 } });
  const start = federation.clock.now();
  assertEquals(await federation.clock.advance({ minutes: 4, seconds: 59 }), []);
  assertEquals((await federation.clock.advance({ seconds: 1 })).length, 1);
  assertEquals(ran, [1]);
  await federation.clock.advance({ minutes: 5 });
  assertEquals(ran, [1, 2]);
  assertEquals(federation.clock.now() - start, 10 * 60_000);
});

test("debounced enqueues run once, with the last payload, when the clock passes the delay", async () => {
  const federation = createFederation<void>();
  const ran: string[] = [];
  const save = federation.defineTask("save-draft", {
    schema: z.object({ text: z.string() }),
    handler: (_ctx, { text }) => void ran.push(text),
  });
  const ctx = federation.createContext(origin, undefined);
  const debounce = { key: "draft:1", delay: { minutes: 5 } };
  await ctx.enqueueTask(save, { text: "h" }, { debounce });
  await federation.clock.advance({ minutes: 2 });
  await ctx.enqueueTask(save, { text: "he" }, { debounce });
  await ctx.enqueueTask(save, { text: "hey" }, { debounce });
  await federation.clock.advance({ minutes: 4 });
  assertEquals(ran, []);
  const runs = await federation.clock.advance({ minutes: 1 });
  assertEquals(ran, ["hey"]);
  assertEquals(runs.filter((run) => run.outcome === "completed").length, 1);
});

test("a throttled task runs once per period, and a new period opens when the clock passes it", async () => {
  const federation = createFederation<void>();
  const ran: number[] = [];
  const ping = federation.defineTask("ping", {
    schema: z.object({ n: z.number() }),
    handler: (_ctx, { n }) => void ran.push(n),
  });
  const ctx = federation.createContext(origin, undefined);
  const throttle = { key: "ping", period: { hours: 1 } };
  assertEquals((await ctx.enqueueTask(ping, { n: 1 }, { throttle })).status, "enqueued");
  assertEquals((await ctx.enqueueTask(ping, { n: 2 }, { throttle })).status, "throttled");
  await federation.clock.advance({ minutes: 59 });
  assertEquals((await ctx.enqueueTask(ping, { n: 3 }, { throttle })).status, "throttled");
  await federation.clock.advance({ minutes: 1 });
  assertEquals((await ctx.enqueueTask(ping, { n: 4 }, { throttle })).status, "enqueued");
  await federation.runPendingTasks();
  assertEquals(ran, [1, 4]);
});

test("due tasks run by priority, then in the order they were enqueued", async () => {
  const federation = createFederation<void>();
  const ran: string[] = [];
  const job = federation.defineTask("job", {
    schema: z.object({ name: z.string() }),
    handler: (_ctx, { name }) => void ran.push(name),
  });
  const ctx = federation.createContext(origin, undefined);
  await ctx.enqueueTask(job, { name: "bulk" }, { priority: -2 });
  await ctx.enqueueTask(job, { name: "first" });
  await ctx.enqueueTask(job, { name: "urgent" }, { priority: 3 });
  await ctx.enqueueTask(job, { name: "second" });
  await federation.runPendingTasks();
  assertEquals(ran, ["urgent", "first", "second", "bulk"]);
});

test("a task handler's sendActivity is recorded, and tasks a task enqueues run in the same call", async () => {
  const federation = createFederation<void>();
  const bob = new Person({
    id: new URL("https://remote.example/users/bob"),
    inbox: new URL("https://remote.example/users/bob/inbox"),
  });
  const announce = federation.defineTask("announce", {
    schema: z.object({ content: z.string() }),
    async handler(ctx, { content }) {
      await ctx.sendActivity(
        { identifier: "alice" },
        bob,
        new Create({
          actor: new URL("https://example.com/users/alice"),
          object: new Note({ content }),
        }),
      );
    },
  });
  const fanOut = federation.defineTask("fan-out", {
    schema: z.object({ contents: z.array(z.string()) }),
    async handler(ctx, { contents }) {
      await ctx.enqueueTaskMany(announce, contents.map((content) => ({ content })));
    },
  });
  await federation.createContext(origin, undefined).enqueueTask(fanOut, { contents: ["a", "b"] });
  const runs = await federation.runPendingTasks();
  assertEquals(runs.map((run) => run.taskName), ["fan-out", "announce", "announce"]);
  const contents = await Promise.all(
    federation.sentActivities.map(async (sent) =>
      ((await (sent.activity as Create).getObject()) as Note).content?.toString()
    ),
  );
  assertEquals(contents, ["a", "b"]);
});

test("runPendingTasks stops a task that keeps enqueueing itself at maxRuns", async () => {
  const federation = createFederation<void>();
  const loop = federation.defineTask("loop", {
    schema: z.object({}),
    async handler(ctx) {
      await ctx.enqueueTask(loop, {});
    },
  });
  await federation.createContext(origin, undefined).enqueueTask(loop, {});
  await assertRejects(() => federation.runPendingTasks({ maxRuns: 5 }), Error, "maxRuns");
  await assertRejects(() => federation.runPendingTasks({ maxRuns: 0 }), RangeError, "maxRuns");
  assertEquals(federation.pendingMessages.length, 1);
});

test("cancelling a running task aborts its signal, and it ends as cancelled", async () => {
  const federation = createFederation<void>();
  const started = deferred<void>();
  const long = federation.defineTask("long", {
    schema: z.object({}),
    async handler(ctx) {
      started.resolve();
      const signal = ctx.task.signal;
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    },
  });
  const enqueued = await federation.createContext(origin, undefined).enqueueTask(long, {});
  assert(enqueued.status === "enqueued");
  const running = federation.runPendingTasks();
  await within(started.promise, "the handler to start");
  const cancelled = await federation.cancelTask(enqueued.messageId, { reason: "stop" });
  assertEquals(cancelled.status, "cancelled");
  const runs = await within(running, "the cancelled task to end");
  assertEquals(runs.map((run) => run.outcome), ["cancelled"]);
  assertEquals((await federation.getTaskStatus(enqueued.messageId))?.state, "cancelled");
});

test("a retrying task holds back the later tasks of its ordering key, and only those", async () => {
  const federation = createFederation<void>();
  const ran: string[] = [];
  let failures = 0;
  const step = federation.defineTask("step", {
    schema: z.object({ name: z.string() }),
    retryPolicy: createExponentialBackoffPolicy({ initialDelay: { seconds: 30 }, jitter: false }),
    handler(_ctx, { name }) {
      if (name === "a" && failures++ === 0) throw new Error("first attempt fails");
      ran.push(name);
    },
  });
  const ctx = federation.createContext(origin, undefined);
  await ctx.enqueueTask(step, { name: "a" }, { orderingKey: "user:1" });
  await ctx.enqueueTask(step, { name: "b" }, { orderingKey: "user:1" });
  await ctx.enqueueTask(step, { name: "other" });
  const first = await federation.runPendingTasks();
  assertEquals(first.map((run) => run.outcome), ["retrying", "completed"]);
  assertEquals(ran, ["other"]);
  await federation.clock.advance({ seconds: 30 });
  assertEquals(ran, ["other", "a", "b"]);
});
