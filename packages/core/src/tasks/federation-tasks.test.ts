// End-to-end tests of typed tasks through the federation: defineTask() on a
// federation or builder, Context.enqueueTask(), and the "task" worker.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  test,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { withLogs } from "@fedify/fixture";
import { SpanKind } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { createFederationBuilder } from "../federation/builder.ts";
import type { Context } from "../federation/context-api.ts";
import type { Federatable } from "../federation/federatable-api.ts";
import { createFederation, type Federation } from "../federation/federation.ts";
import type { FederationOptions } from "../federation/options.ts";
import { deferred, within as withTimeout } from "@fedify/fixture";
import { type EnqueueRecord, RecordingQueue } from "../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { durationToMilliseconds, millisecondsToDuration } from "../time/duration.ts";
import { encodeTaskPayload } from "./codec/mod.ts";
import { TaskDefinitionError, TaskNotDefinedError, TaskQueueNotConfiguredError } from "./errors.ts";
import type { TaskMessage } from "./message.ts";
import type { TaskRegistry } from "../federation/context-api.ts";

interface AppData {
  readonly app: string;
}

const base = new URL("https://web.example/");

function federationWith(
  options: Omit<FederationOptions<AppData>, "kv">,
): Federation<AppData> {
  return createFederation<AppData>({ kv: new MemoryKvStore(), ...options });
}

const fixedDelay = (ms: number, maxAttempts = 10): RetryPolicy => ({ attempts }) =>
  attempts >= maxAttempts ? null : millisecondsToDuration(ms);

function taskMessage(taskName: string, data: string): TaskMessage {
  return {
    type: "task",
    id: crypto.randomUUID(),
    baseUrl: base.href,
    taskName,
    data,
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
  };
}

/** A {@link RecordingQueue} that also has `enqueueMany()`. */
class BatchingQueue extends RecordingQueue {
  readonly batches: EnqueueRecord[][] = [];

  // deno-lint-ignore no-explicit-any
  async enqueueMany(messages: readonly any[], options: MessageQueueEnqueueOptions = {}) {
    this.batches.push(messages.map((message) => ({ message, options })));
    for (const message of messages) await this.enqueue(message, options);
  }
}

test("ctx.enqueueTask() runs the typed handler with a context built from the message and the worker's data", async () => {
  const queue = new RecordingQueue();
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  const received = deferred<{ n: number; origin: string; data: AppData }>();
  const double = federation.defineTask("double", {
    schema: z.object({ n: z.number() }),
    handler(ctx, { n }) {
      received.resolve({ n: n * 2, origin: ctx.origin, data: ctx.data });
    },
  });
  const controller = new AbortController();
  const worker = federation.startQueue({ app: "worker" }, { signal: controller.signal });
  try {
    const ctx = federation.createContext(new URL("/some/path?q=1", base), { app: "web" });
    await ctx.enqueueTask(double, { n: 21 });
    const result = await withTimeout(received.promise, "the task handler");
    assertEquals(result, { n: 42, origin: base.origin, data: { app: "worker" } });
    assertEquals((queue.enqueued[0].message as TaskMessage).baseUrl, base.href);
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
  }
});

test("a task context's base URL is its own: changing it changes no later task's context", async () => {
  const federation = federationWith({ queue: new RecordingQueue({ deliver: false }) });
  const seen: { href: string; url: URL; origin: string }[] = [];
  const task = federation.defineTask("url", {
    schema: z.object({ n: z.number() }),
    handler(ctx) {
      // Not part of the Context type, but reachable from JavaScript.
      const url = (ctx as unknown as { readonly url: URL }).url;
      seen.push({ href: url.href, url, origin: ctx.origin });
      url.host = "attacker.example";
    },
  });
  const data = await encodeTaskPayload({ n: 1 });
  for (let i = 0; i < 2; i++) {
    await federation.processQueuedMessage({ app: "worker" }, taskMessage(task.name, data));
  }
  assertEquals(seen.map(({ href, origin }) => ({ href, origin })), [
    { href: base.href, origin: base.origin },
    { href: base.href, origin: base.origin },
  ]);
  assert(seen[0].url !== seen[1].url);
});

test("enqueueTask() payloads are type-checked against the task's schema", () => {
  const federation = federationWith({ queue: new RecordingQueue({ deliver: false }) });
  const task = federation.defineTask("typed", {
    schema: z.object({ n: z.number(), at: z.date() }),
    handler(ctx, data) {
      const app: string = ctx.data.app;
      const at: Date = data.at;
      // @ts-expect-error: n is a number.
      const wrong: string = data.n;
      void [app, at, wrong];
    },
  });
  const typeOnly = (ctx: Context<AppData>) => {
    void ctx.enqueueTask(task, { n: 1, at: new Date() });
    // @ts-expect-error: n must be a number.
    void ctx.enqueueTask(task, { n: "one", at: new Date() });
    // @ts-expect-error: at is missing.
    void ctx.enqueueTask(task, { n: 1 });
    void ctx.enqueueTaskMany(task, [{ n: 1, at: new Date() }]);
    // @ts-expect-error: every payload must match.
    void ctx.enqueueTaskMany(task, [{ n: 1, at: new Date() }, { n: 2 }]);
    const other = createFederation<{ other: true }>({ kv: new MemoryKvStore() })
      .defineTask("other", { schema: z.object({ n: z.number() }), handler() {} });
    // @ts-expect-error: a task of another context data type.
    void ctx.enqueueTask(other, { n: 1 });
  };
  assertEquals(typeof typeOnly, "function");
});

test("Federatable is assignable to TaskRegistry", () => {
  const federatable: Federatable<AppData> = createFederationBuilder<AppData>();
  const registry: TaskRegistry<AppData> = federatable;
  assertEquals(typeof registry.defineTask, "function");
});

test("a web federation enqueues a Create, a Date and a Map that a worker federation from the same builder runs", async () => {
  const builder = createFederationBuilder<AppData>();
  const received = deferred<{ ctx: Context<AppData>; data: unknown }>();
  const publish = builder.defineTask("publish", {
    schema: z.object({
      activity: z.instanceof(Create),
      at: z.date(),
      counts: z.map(z.string(), z.number()),
    }),
    handler(ctx, data) {
      received.resolve({ ctx, data });
    },
  });
  const shared = new InProcessMessageQueue();
  const web = await builder.build({
    kv: new MemoryKvStore(),
    queue: { task: shared },
    manuallyStartQueue: true,
  });
  const worker = await builder.build({
    kv: new MemoryKvStore(),
    queue: { task: shared },
    manuallyStartQueue: true,
  });
  const controller = new AbortController();
  const running = worker.startQueue({ app: "worker" }, {
    signal: controller.signal,
    queue: "task",
  });
  try {
    const at = new Date("2026-01-02T03:04:05.678Z");
    const counts = new Map([["likes", 3], ["boosts", 1]]);
    const activity = new Create({
      id: new URL("https://web.example/activities/1"),
      actor: new URL("https://web.example/users/alice"),
      object: new Note({
        id: new URL("https://web.example/notes/1"),
        content: "Hello, tasks!",
      }),
    });
    await web.createContext(base, { app: "web" }).enqueueTask(publish, { activity, at, counts });
    const { ctx, data } = await withTimeout(received.promise, "the worker to run the task");
    const payload = data as { activity: Create; at: Date; counts: Map<string, number> };
    assertInstanceOf(payload.activity, Create);
    assertEquals(payload.activity.id?.href, "https://web.example/activities/1");
    assertEquals(payload.activity.actorId?.href, "https://web.example/users/alice");
    const note = await payload.activity.getObject();
    assertInstanceOf(note, Note);
    assertEquals(note.id?.href, "https://web.example/notes/1");
    assertEquals(note.content?.toString(), "Hello, tasks!");
    assertInstanceOf(payload.at, Date);
    assertEquals(payload.at.getTime(), at.getTime());
    assertInstanceOf(payload.counts, Map);
    assertEquals([...payload.counts], [["likes", 3], ["boosts", 1]]);
    assertEquals(ctx.data, { app: "worker" });
    assertEquals(ctx.origin, base.origin);
    assert(ctx.federation === worker, "the worker federation built the handler's context");
  } finally {
    controller.abort();
    await running;
    await shared[Symbol.asyncDispose]();
  }
});

test("a payload that fails the schema on the worker is dropped without retry", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  let calls = 0;
  federation.defineTask("strict", {
    schema: z.object({ n: z.number() }),
    handler() {
      calls++;
    },
  });
  await withLogs(async (records) => {
    await federation.processQueuedMessage(
      { app: "worker" },
      taskMessage("strict", await encodeTaskPayload({ n: "not a number" })),
    );
    assertEquals(calls, 0);
    assertEquals(queue.enqueued.length, 0);
    assert(
      records.some((record) => record.level === "error" && record.properties.taskName === "strict"),
      "the drop is logged",
    );
  });
});

test("processQueuedTask(), Fedify's name, runs a queued task as processQueuedMessage() does", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  const seen: [number, unknown][] = [];
  federation.defineTask("ported", {
    schema: z.object({ n: z.number() }),
    handler(ctx, data) {
      seen.push([data.n, ctx.data]);
    },
  });
  await federation.processQueuedTask(
    { app: "worker" },
    taskMessage("ported", await encodeTaskPayload({ n: 7 })),
  );
  assertEquals(seen, [[7, { app: "worker" }]]);
});

test("a malformed wire string is dropped without retry", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  let calls = 0;
  federation.defineTask("wire", {
    schema: z.object({ n: z.number() }),
    handler() {
      calls++;
    },
  });
  await withLogs(async (records) => {
    await federation.processQueuedMessage({ app: "worker" }, taskMessage("wire", "{not devalue"));
    assertEquals(calls, 0);
    assertEquals(queue.enqueued.length, 0);
    assert(
      records.some((record) => record.level === "error" && record.properties.taskName === "wire"),
      "the drop is logged",
    );
  });
});

test("a message for an unknown task is dropped with a warning", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  await withLogs(async (records) => {
    await federation.processQueuedMessage(
      { app: "worker" },
      taskMessage("nobody-defined-me", await encodeTaskPayload({})),
    );
    assertEquals(queue.enqueued.length, 0);
    assert(
      records.some((record) =>
        record.level === "warning" && record.properties.taskName === "nobody-defined-me"
      ),
      "a warning names the task",
    );
  });
});

test("a failing task is retried once per failure with the federation's backoff", async () => {
  const queue = new RecordingQueue();
  const federation = federationWith({
    queue: { task: queue },
    manuallyStartQueue: true,
    taskRetryPolicy: fixedDelay(20),
  });
  const attempts: number[] = [];
  const done = deferred();
  const flaky = federation.defineTask("flaky", {
    schema: z.object({ n: z.number() }),
    handler() {
      attempts.push(attempts.length);
      if (attempts.length < 3) throw new Error("not yet");
      done.resolve();
    },
  });
  const controller = new AbortController();
  const worker = federation.startQueue({ app: "worker" }, { signal: controller.signal });
  try {
    await federation.createContext(base, { app: "web" }).enqueueTask(flaky, { n: 1 });
    await withTimeout(done.promise, "the third attempt");
    // The original enqueue plus exactly one re-enqueue per failure: the
    // worker's own retry does not add a second copy.
    assertEquals(
      queue.enqueued.map((record) => (record.message as TaskMessage).attempt),
      [0, 1, 2],
    );
    assertEquals(
      queue.enqueued.slice(1).map((record) => durationToMilliseconds(record.options.delay!)),
      [20, 20],
    );
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
  }
});

test("a task's own retry policy overrides the federation's taskRetryPolicy", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({
    queue: { task: queue },
    manuallyStartQueue: true,
    taskRetryPolicy: fixedDelay(60_000),
  });
  federation.defineTask("own-policy", {
    schema: z.object({}),
    retryPolicy: fixedDelay(7),
    handler() {
      throw new Error("fails");
    },
  });
  await federation.processQueuedMessage(
    { app: "worker" },
    taskMessage("own-policy", await encodeTaskPayload({})),
  );
  assertEquals(queue.enqueued.length, 1);
  assertEquals((queue.enqueued[0].message as TaskMessage).attempt, 1);
  assertEquals(durationToMilliseconds(queue.enqueued[0].options.delay!), 7);
});

test("a queue with nativeRetrial gets the task's error and no re-enqueue", async () => {
  const queue = new RecordingQueue({ nativeRetrial: true });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  const failing = federation.defineTask("native", {
    schema: z.object({}),
    handler() {
      throw new Error("let the queue retry");
    },
  });
  const controller = new AbortController();
  const worker = federation.startQueue({ app: "worker" }, { signal: controller.signal });
  try {
    await federation.createContext(base, { app: "web" }).enqueueTask(failing, {});
    await queue.waitUntil(() => queue.handlerErrors.length === 1, "the rethrown error");
    assertEquals((queue.handlerErrors[0] as Error).message, "let the queue retry");
    assertEquals(queue.enqueued.length, 1);
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
  }
});

test("a task goes to its own queue, else the task queue, else the outbox queue", async () => {
  const own = new RecordingQueue({ deliver: false });
  const task = new RecordingQueue({ deliver: false });
  const outbox = new RecordingQueue({ deliver: false });
  const schema = z.object({});
  const both = federationWith({ queue: { task, outbox }, manuallyStartQueue: true });
  const withOwn = both.defineTask("own", { schema, queue: own, handler() {} });
  const plain = both.defineTask("plain", { schema, handler() {} });
  const ctx = both.createContext(base, { app: "web" });
  await ctx.enqueueTask(withOwn, {});
  await ctx.enqueueTask(plain, {});
  const outboxOnly = federationWith({ queue: { outbox }, manuallyStartQueue: true });
  const fallback = outboxOnly.defineTask("fallback", { schema, handler() {} });
  await outboxOnly.createContext(base, { app: "web" }).enqueueTask(fallback, {});
  assertEquals(own.enqueued.map((r) => (r.message as TaskMessage).taskName), ["own"]);
  assertEquals(task.enqueued.map((r) => (r.message as TaskMessage).taskName), ["plain"]);
  assertEquals(outbox.enqueued.map((r) => (r.message as TaskMessage).taskName), ["fallback"]);
});

test("strict task queue resolution refuses the outbox queue", async () => {
  const outbox = new RecordingQueue({ deliver: false });
  const federation = federationWith({
    queue: { outbox },
    manuallyStartQueue: true,
    taskQueueResolution: "strict",
  });
  const task = federation.defineTask("isolated", { schema: z.object({}), handler() {} });
  await assertRejects(
    () => federation.createContext(base, { app: "web" }).enqueueTask(task, {}),
    TaskQueueNotConfiguredError,
    "isolated",
  );
  assertEquals(outbox.enqueued.length, 0);
});

test("a task that falls back to the outbox queue is run by the outbox worker", async () => {
  const outbox = new RecordingQueue();
  const federation = federationWith({ queue: { outbox }, manuallyStartQueue: true });
  const ran = deferred();
  const task = federation.defineTask("via-outbox", {
    schema: z.object({}),
    handler() {
      ran.resolve();
    },
  });
  const controller = new AbortController();
  const worker = federation.startQueue({ app: "worker" }, {
    signal: controller.signal,
    queue: "outbox",
  });
  try {
    await federation.createContext(base, { app: "web" }).enqueueTask(task, {});
    await withTimeout(ran.promise, "the outbox worker to run the task");
  } finally {
    controller.abort();
    await worker;
    await outbox[Symbol.asyncDispose]();
  }
});

test('startQueue({ queue: "task" }) listens to the task queue and per-task queues only', async () => {
  const inbox = new RecordingQueue({ deliver: false });
  const outbox = new RecordingQueue({ deliver: false });
  const fanout = new RecordingQueue({ deliver: false });
  const task = new RecordingQueue({ deliver: false });
  const own = new RecordingQueue({ deliver: false });
  const federation = federationWith({
    queue: { inbox, outbox, fanout, task },
    manuallyStartQueue: true,
  });
  federation.defineTask("own-queue", { schema: z.object({}), queue: own, handler() {} });
  // A task whose queue is a role's queue does not get a second listener.
  federation.defineTask("on-task-queue", { schema: z.object({}), queue: task, handler() {} });
  const controller = new AbortController();
  const worker = federation.startQueue({ app: "worker" }, {
    signal: controller.signal,
    queue: "task",
  });
  try {
    assertEquals(
      [inbox, outbox, fanout, task, own].map((queue) => queue.listenCount),
      [0, 0, 0, 1, 1],
    );
  } finally {
    controller.abort();
    await worker;
  }
});

test("enqueueTaskMany() uses enqueueMany() when the queue has it", async () => {
  const queue = new BatchingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  const task = federation.defineTask("batch", {
    schema: z.object({ n: z.number() }),
    handler() {},
  });
  await federation.createContext(base, { app: "web" }).enqueueTaskMany(
    task,
    [{ n: 1 }, { n: 2 }, { n: 3 }],
    { orderingKey: "k" },
  );
  assertEquals(queue.batches.length, 1);
  assertEquals(queue.batches[0].length, 3);
  assertEquals(queue.batches[0][0].options.orderingKey, "k");
  const traceparents = new Set(
    queue.batches[0].map((record) => (record.message as TaskMessage).traceContext.traceparent),
  );
  assertEquals(traceparents.size, 1);
});

test("enqueueTaskMany() enqueues in parallel without enqueueMany()", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  const task = federation.defineTask("many", { schema: z.object({ n: z.number() }), handler() {} });
  await federation.createContext(base, { app: "web" }).enqueueTaskMany(task, [{ n: 1 }, { n: 2 }], {
    delay: { seconds: 30 },
  });
  assertEquals(queue.enqueued.length, 2);
  assertEquals(queue.enqueued.map((record) => durationToMilliseconds(record.options.delay!)), [
    30_000,
    30_000,
  ]);
});

test("enqueueTaskMany() enqueues nothing when one payload is invalid", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const federation = federationWith({ queue: { task: queue }, manuallyStartQueue: true });
  const task = federation.defineTask("all-or-none", {
    schema: z.object({ n: z.number() }),
    handler() {},
  });
  await assertRejects(() =>
    federation.createContext(base, { app: "web" }).enqueueTaskMany(task, [
      { n: 1 },
      { n: "two" as unknown as number },
    ])
  );
  assertEquals(queue.enqueued.length, 0);
});

test("defineTask() on a federation throws for a name already defined", () => {
  const federation = federationWith({});
  federation.defineTask("twice", { schema: z.object({}), handler() {} });
  assertThrows(
    () => federation.defineTask("twice", { schema: z.object({}), handler() {} }),
    TaskDefinitionError,
    "twice",
  );
});

test("a task defined on a builder after a build() is unknown to that federation", async () => {
  const builder = createFederationBuilder<AppData>();
  const schema = z.object({});
  const early = builder.defineTask("early", { schema, handler() {} });
  const queue = new RecordingQueue({ deliver: false });
  const options = { kv: new MemoryKvStore(), queue: { task: queue }, manuallyStartQueue: true };
  const first = await builder.build(options);
  const late = builder.defineTask("late", { schema, handler() {} });
  const second = await builder.build(options);
  // A task defined on one built federation does not reach its sibling.
  second.defineTask("only-second", { schema, handler() {} });
  const firstCtx = first.createContext(base, { app: "web" });
  await firstCtx.enqueueTask(early, {});
  await assertRejects(() => firstCtx.enqueueTask(late, {}), TaskNotDefinedError, "late");
  const secondCtx = second.createContext(base, { app: "web" });
  await secondCtx.enqueueTask(early, {});
  await secondCtx.enqueueTask(late, {});
  first.defineTask("only-second", { schema, handler() {} });
  assertEquals(queue.enqueued.length, 3);
});

test("a task handle from another federation is rejected even with the same name", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const options = { queue: { task: queue }, manuallyStartQueue: true };
  const one = federationWith(options);
  const two = federationWith(options);
  const schema = z.object({});
  const fromOne = one.defineTask("same-name", { schema, handler() {} });
  two.defineTask("same-name", { schema, handler() {} });
  await assertRejects(
    () => two.createContext(base, { app: "web" }).enqueueTask(fromOne, {}),
    TaskNotDefinedError,
    "same-name",
  );
  assertEquals(queue.enqueued.length, 0);
});

test("a task's processing span is a child of the span that enqueued it", async () => {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const queue = new RecordingQueue();
  const federation = federationWith({
    queue: { task: queue },
    manuallyStartQueue: true,
    tracerProvider,
  });
  const ran = deferred();
  const task = federation.defineTask("traced", {
    schema: z.object({}),
    handler() {
      ran.resolve();
    },
  });
  const controller = new AbortController();
  const worker = federation.startQueue({ app: "worker" }, { signal: controller.signal });
  try {
    await federation.createContext(base, { app: "web" }).enqueueTask(task, {});
    await withTimeout(ran.promise, "the task handler");
    // listen() resolves only after the running handler, and so its span, has ended.
    controller.abort();
    await worker;
    const spans = exporter.getFinishedSpans();
    const enqueue = spans.find((span) => span.name === "fedwork.queue.enqueue");
    const process = spans.find((span) => span.name === "fedwork.queue.process");
    assert(enqueue != null && process != null, "both spans were recorded");
    assertEquals(enqueue.kind, SpanKind.PRODUCER);
    assertEquals(enqueue.attributes["fedwork.message.type"], "task");
    assertEquals(process.attributes["fedwork.message.type"], "task");
    assertEquals(process.spanContext().traceId, enqueue.spanContext().traceId);
    assertEquals(process.parentSpanContext?.spanId, enqueue.spanContext().spanId);
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
    await tracerProvider.shutdown();
  }
});

test("the first enqueueTask() starts the workers unless manuallyStartQueue is set", async () => {
  const queue = new RecordingQueue();
  const federation = federationWith({ queue: { task: queue } });
  const ran = deferred<AppData>();
  const task = federation.defineTask("auto", {
    schema: z.object({}),
    handler(ctx) {
      ran.resolve(ctx.data);
    },
  });
  try {
    await federation.createContext(base, { app: "web" }).enqueueTask(task, {});
    assertEquals(await withTimeout(ran.promise, "the auto-started worker"), { app: "web" });
  } finally {
    await queue[Symbol.asyncDispose]();
  }
});

test("a failing task processed without any queue runs once and is given up, not thrown", async () => {
  const federation = federationWith({});
  let calls = 0;
  federation.defineTask("queueless", {
    schema: z.object({}),
    handler() {
      calls++;
      throw new Error("fails");
    },
  });
  await withLogs(async (records) => {
    await federation.processQueuedMessage(
      { app: "worker" },
      taskMessage("queueless", await encodeTaskPayload({})),
    );
    assertEquals(calls, 1);
    assert(
      records.some((record) => record.level === "error" && /Gave up/.test(String(record.message))),
      "the give-up is logged",
    );
  });
});
