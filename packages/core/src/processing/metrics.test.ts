// Metrics through the OpenTelemetry SDK's in-memory exporter: a federation's
// tasks end to end, and every message kind through the dispatcher.
import { assert, assertEquals, test } from "@fedify/fixture";
import { metrics, trace } from "@opentelemetry/api";
import { z } from "zod";
import { createFederation } from "../federation/federation.ts";
import { deferred, within as withTimeout, withLogs } from "@fedify/fixture";
import { RecordingQueue } from "../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { MessageDispatcher, type MessageKindHandler } from "./dispatcher.ts";
import type { BaseMessage } from "./envelope.ts";
import { MalformedMessageError, PermanentError } from "./errors.ts";
import { MessageEventHub } from "./events.ts";
import { MESSAGE_METRICS, MessageMetrics } from "./metrics.ts";
import { getFedworkTracer } from "./tracing.ts";
import { count, histogramCount, testMeters } from "./testdata/test-meters.ts";

test("metrics count a retried attempt as retried, never as completed", async () => {
  const meters = testMeters();
  const queue = new RecordingQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    meterProvider: meters.meterProvider,
    taskRetryPolicy: ({ attempts }) => attempts < 3 ? millisecondsToDuration(10) : null,
  });
  let calls = 0;
  const done = deferred();
  const flaky = federation.defineTask("flaky", {
    schema: z.object({}),
    handler() {
      if (++calls === 1) throw new Error("first attempt fails");
    },
    on: { completed: () => done.resolve() },
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  try {
    await federation.createContext(new URL("https://example.com/"), undefined)
      .enqueueTask(flaky, {});
    await withTimeout(done.promise, "the task to complete");
  } finally {
    controller.abort();
    await worker;
  }
  const metrics = await meters.collect();
  const task = { "fedwork.message.type": "task", "fedwork.task.name": "flaky" };
  // A retry is counted as retried, not as a new enqueue.
  assertEquals(count(metrics, MESSAGE_METRICS.enqueued, task), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.retried, task), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.completed, task), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.failed, task), 0);
  assertEquals(histogramCount(metrics, MESSAGE_METRICS.duration, task), 2);
  assertEquals(
    histogramCount(metrics, MESSAGE_METRICS.duration, {
      ...task,
      "fedwork.message.outcome": "retrying",
    }),
    1,
  );
  assertEquals(histogramCount(metrics, MESSAGE_METRICS.queueWait, task), 2);
  await meters.shutdown();
});

test("metrics count failures by reason and deduplicated enqueues", async () => {
  const meters = testMeters();
  const queue = new RecordingQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    meterProvider: meters.meterProvider,
  });
  const failed = deferred();
  const doomed = federation.defineTask("doomed", {
    schema: z.object({}),
    handler() {
      throw new PermanentError("never");
    },
    on: { failed: () => failed.resolve() },
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  try {
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    await ctx.enqueueTaskMany(doomed, [{}, {}], { deduplicationKey: "one" });
    await withTimeout(failed.promise, "the task to fail");
  } finally {
    controller.abort();
    await worker;
  }
  const metrics = await meters.collect();
  const task = { "fedwork.message.type": "task", "fedwork.task.name": "doomed" };
  assertEquals(count(metrics, MESSAGE_METRICS.enqueued, task), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.deduplicated, task), 1);
  assertEquals(
    count(metrics, MESSAGE_METRICS.failed, { ...task, "fedwork.failure.reason": "permanent" }),
    1,
  );
  assertEquals(count(metrics, MESSAGE_METRICS.completed, task), 0);
  assertEquals(count(metrics, MESSAGE_METRICS.retried, task), 0);
  await meters.shutdown();
});

test("metrics count timed-out attempts, and abandoned handlers apart", async () => {
  const meters = testMeters();
  const queue = new RecordingQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    meterProvider: meters.meterProvider,
    taskTimeout: { milliseconds: 100 },
    timeoutGracePeriod: { milliseconds: 100 },
  });
  const stubbornFailed = deferred();
  const politeCompleted = deferred();
  const stubborn = federation.defineTask("stubborn", {
    schema: z.object({}),
    retryPolicy: () => null,
    handler: () => new Promise<void>(() => {}),
    on: { failed: () => stubbornFailed.resolve() },
  });
  const polite = federation.defineTask("polite", {
    schema: z.object({}),
    retryPolicy: () => millisecondsToDuration(10),
    async handler(ctx) {
      if (ctx.task.attempt > 0) return;
      await new Promise((_, reject) =>
        ctx.task.signal.addEventListener("abort", () => reject(ctx.task.signal.reason))
      );
    },
    on: { completed: () => politeCompleted.resolve() },
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, queue: "task" });
  try {
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    await withLogs(async () => {
      await ctx.enqueueTask(stubborn, {});
      await ctx.enqueueTask(polite, {});
      await withTimeout(stubbornFailed.promise, "the stubborn task to fail");
      await withTimeout(politeCompleted.promise, "the polite task to complete");
    });
  } finally {
    controller.abort();
    await worker;
  }
  const metrics = await meters.collect();
  const of = (name: string) => ({ "fedwork.message.type": "task", "fedwork.task.name": name });
  assertEquals(count(metrics, MESSAGE_METRICS.timedOut, of("stubborn")), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.abandoned, of("stubborn")), 1);
  assertEquals(
    count(metrics, MESSAGE_METRICS.failed, {
      ...of("stubborn"),
      "fedwork.failure.reason": "timeout",
    }),
    1,
  );
  assertEquals(count(metrics, MESSAGE_METRICS.timedOut, of("polite")), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.abandoned, of("polite")), 0);
  assertEquals(count(metrics, MESSAGE_METRICS.retried, of("polite")), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.completed, of("polite")), 1);
  await meters.shutdown();
});

interface KindMessage extends BaseMessage {
  readonly behaviour: "ok" | "fail" | "malformed";
}

test("inbox, outbox and fan-out messages get the same metrics, by kind", async () => {
  const meters = testMeters();
  const metrics = new MessageMetrics(meters.meterProvider);
  const dispatcher = new MessageDispatcher<void>(
    getFedworkTracer(trace.getTracerProvider()),
    new MessageEventHub(),
  );
  dispatcher.observe(metrics.observe);
  const handler: MessageKindHandler<void, KindMessage> = {
    check(message) {
      const m = message as KindMessage;
      if (m.behaviour === "malformed") throw new MalformedMessageError("malformed");
      return m;
    },
    run(message) {
      return message.behaviour === "fail" ? Promise.reject(new Error("failed")) : Promise.resolve();
    },
    retryPolicy: () => ({ attempts }) => attempts < 2 ? millisecondsToDuration(1) : null,
    retryQueue: () => ({ enqueue: () => Promise.resolve(), listen: () => Promise.resolve() }),
  };
  const kinds = ["inbox", "outbox", "fanout"] as const;
  for (const kind of kinds) dispatcher.register(kind, handler);
  const message = (type: string, behaviour: KindMessage["behaviour"], attempt = 0) => ({
    type,
    id: crypto.randomUUID(),
    baseUrl: "https://example.com/",
    started: new Date(Date.now() - 50).toISOString(),
    attempt,
    traceContext: {},
    behaviour,
  });
  for (const kind of kinds) {
    metrics.recordEnqueued([message(kind, "ok")]);
    await dispatcher.dispatch(message(kind, "ok"), { contextData: undefined, signal: NEVER });
    await dispatcher.dispatch(message(kind, "fail"), { contextData: undefined, signal: NEVER });
    await dispatcher.dispatch(message(kind, "fail", 1), { contextData: undefined, signal: NEVER });
    await dispatcher.dispatch(message(kind, "malformed"), {
      contextData: undefined,
      signal: NEVER,
    });
  }
  const collected = await meters.collect();
  for (const kind of kinds) {
    const attributes = { "fedwork.message.type": kind };
    assertEquals(count(collected, MESSAGE_METRICS.enqueued, attributes), 1, kind);
    assertEquals(count(collected, MESSAGE_METRICS.completed, attributes), 1, kind);
    assertEquals(count(collected, MESSAGE_METRICS.retried, attributes), 1, kind);
    assertEquals(
      count(collected, MESSAGE_METRICS.failed, {
        ...attributes,
        "fedwork.failure.reason": "exhausted",
      }),
      1,
      kind,
    );
    assertEquals(count(collected, MESSAGE_METRICS.dropped, attributes), 1, kind);
    assertEquals(histogramCount(collected, MESSAGE_METRICS.duration, attributes), 4, kind);
    // The first attempts are measured from when they were enqueued; the
    // retry (attempt 1, without dueAt) is not measured.
    assertEquals(histogramCount(collected, MESSAGE_METRICS.queueWait, attributes), 3, kind);
  }
  const metric = collected.find((m) => m.descriptor.name === MESSAGE_METRICS.queueWait);
  assert(metric != null);
  assertEquals(metric.descriptor.unit, "s");
  await meters.shutdown();
});

const NEVER = new AbortController().signal;

test("Fedwork's own tasks are counted as enqueued and recorded as queued like any task", async () => {
  const meters = testMeters();
  // deliver: false keeps the webhook request in the queue: only its enqueue
  // is looked at.
  const queue = new RecordingQueue({ deliver: false });
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    meterProvider: meters.meterProvider,
  });
  const work = federation.defineTask("work", { schema: z.object({}), handler() {} });
  await federation.addWebhook({
    url: "https://hooks.example.com/",
    events: ["completed"],
    secret: "metrics-test-secret-0123456789",
  });
  await federation.createContext(new URL("https://example.com/"), undefined)
    .enqueueTask(work, {});
  await federation.processQueuedMessage(undefined, queue.enqueued[0].message);
  const request = queue.enqueued[1]?.message;
  assert(request?.type === "task" && request.taskName === "fedwork:webhook", "a webhook request");
  assertEquals((await federation.getTaskStatus(request.id))?.state, "queued");
  const metrics = await meters.collect();
  assertEquals(
    count(metrics, MESSAGE_METRICS.enqueued, {
      "fedwork.message.type": "task",
      "fedwork.task.name": "fedwork:webhook",
    }),
    1,
  );
  await meters.shutdown();
});

test("metrics without a meter provider record nothing and are not observed per message", async () => {
  // No provider given and none registered: OpenTelemetry's no-op meter,
  // whose instruments are shared objects that record nothing.
  const idle = new MessageMetrics(metrics.getMeterProvider());
  assertEquals(idle.recording, false);
  // A real provider records; the tests above check that its counts arrive
  // through the federation's observer, which is registered only then.
  const meters = testMeters();
  try {
    assertEquals(new MessageMetrics(meters.meterProvider).recording, true);
  } finally {
    await meters.shutdown();
  }
});

test("metrics count throttled enqueues", async () => {
  const meters = testMeters();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: new RecordingQueue({ deliver: false }) },
    manuallyStartQueue: true,
    meterProvider: meters.meterProvider,
  });
  const digest = federation.defineTask("digest", { schema: z.object({}), handler() {} });
  const ctx = federation.createContext(new URL("https://example.com/"), undefined);
  await ctx.enqueueTaskMany(digest, [{}, {}, {}], {
    throttle: { key: "alice", period: { hours: 1 } },
  });
  const metrics = await meters.collect();
  const task = { "fedwork.message.type": "task", "fedwork.task.name": "digest" };
  assertEquals(count(metrics, MESSAGE_METRICS.enqueued, task), 1);
  assertEquals(count(metrics, MESSAGE_METRICS.throttled, task), 2);
  await meters.shutdown();
});
