// What durable steps show: the task's status record and watchTask()
// updates name the current step and the recorded ones, and each step that
// does something in a run gets a span.
import { assert, assertEquals, startTestServer, test, waitUntil } from "@fedify/fixture";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { createFederation } from "../../federation/federation.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import type { TaskUpdate } from "../../operator/status/store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import type { WebhookPayload } from "../../operator/webhooks/types.ts";
import { verifyWebhookRequest } from "../../operator/webhooks/verify.ts";

const base = new URL("https://example.com/");

test("the status shows the waiting step and the recorded ones; watchers get step updates", async () => {
  await using queue = new InProcessMessageQueue();
  const exporter = new InMemorySpanExporter();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    tracerProvider: new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    }),
  });
  const task = federation.defineTask("steps-visible", {
    schema: z.object({}),
    handler: async (ctx) => {
      await ctx.step.run("fetch", () => 1);
      await ctx.step.waitForEvent("approval", {
        event: "approved",
        key: ctx.task.id,
        timeout: { minutes: 5 },
      });
      await ctx.step.run("publish", () => 2);
    },
  });
  const enqueued = await federation.createContext(base, undefined).enqueueTask(task, {});
  assert(enqueued.status === "enqueued");
  const updates: TaskUpdate[] = [];
  const watching = (async () => {
    for await (const update of federation.watchTask(enqueued.messageId)) {
      updates.push(update);
      if (update.status.state === "completed") break;
    }
  })();
  await withWorkers(federation, async () => {
    await waitUntil(async () => {
      const status = await federation.getTaskStatus(enqueued.messageId);
      return status?.state === "retrying" && status.steps?.current?.id === "approval";
    }, { what: "the task to wait at its approval step" });
    const waiting = await federation.getTaskStatus(enqueued.messageId);
    assertEquals(waiting?.steps, {
      current: { id: "approval", kind: "wait", phase: "waiting" },
      recorded: ["fetch"],
      recordedCount: 1,
    });
    await federation.sendEvent("approved", { key: enqueued.messageId });
    await watching;
    const done = await federation.getTaskStatus(enqueued.messageId);
    assertEquals(done?.state, "completed");
    assertEquals(done?.steps, { recorded: ["fetch", "approval", "publish"], recordedCount: 3 });
  });
  const stepUpdates = updates.filter((update) => update.kind === "step");
  assertEquals(
    stepUpdates.map((update) => update.status.steps?.current?.id),
    ["fetch", "approval", "publish"],
  );
  const spans = exporter.getFinishedSpans().filter((span) => span.name === "fedwork.task.step");
  // fetch and the wait in the first run; the wait (resumed) and publish in
  // the second: the replayed fetch gets no span.
  assertEquals(
    spans.map((
      span,
    ) => [span.attributes["fedwork.step.id"], span.attributes["fedwork.step.outcome"]]),
    [["fetch", "recorded"], ["approval", "suspended"], ["approval", "recorded"], [
      "publish",
      "recorded",
    ]],
  );
  assertEquals(spans[0].attributes["fedwork.message.id"], enqueued.messageId);
});

test("the completed and failed webhooks of a task with steps carry its steps", async () => {
  const secret = "webhook-test-secret-0123456789";
  const received: WebhookPayload[] = [];
  await using server = await startTestServer(async (request) => {
    received.push(await verifyWebhookRequest(request, { secret, toleranceSeconds: 60 }));
    return new Response(null, { status: 204 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
  });
  const task = federation.defineTask("steps-hooked", {
    schema: z.object({ fail: z.boolean() }),
    retryPolicy: () => null,
    handler: async (ctx, data) => {
      await ctx.step.run("one", () => 1);
      await ctx.step.run("two", () => {
        if (data.fail) throw new Error("two failed");
      });
    },
  });
  const plain = federation.defineTask("plain-hooked", { schema: z.object({}), handler() {} });
  await federation.addWebhook({ url: server.url, events: ["completed", "failed"], secret });
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    await ctx.enqueueTask(task, { fail: false });
    await ctx.enqueueTask(task, { fail: true });
    await ctx.enqueueTask(plain, {});
    await waitUntil(() => received.length >= 3, { what: "three webhook requests" });
  });
  const completed = received.find((p) => p.type === "completed" && p.task.name === "steps-hooked");
  assertEquals(completed?.task.steps, { recorded: ["one", "two"], recordedCount: 2 });
  const failed = received.find((p) => p.type === "failed");
  assertEquals(failed?.task.steps, {
    current: { id: "two", kind: "run", phase: "running" },
    recorded: ["one"],
    recordedCount: 1,
  });
  const other = received.find((p) => p.task.name === "plain-hooked");
  assertEquals(other?.task.steps, undefined);
});
