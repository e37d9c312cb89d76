// The federation's time limits: the options, a task's own limit, the inbox
// listener's signal and a delivery as a whole.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertThrows,
  deferred,
  startTestServer,
  test,
  within,
  withLogs,
} from "@fedify/fixture";
import { Create, Follow } from "@fedify/vocab";
import { z } from "zod";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { HandlerTimeoutError } from "../processing/errors.ts";
import type { MessageEvent } from "../processing/events.ts";
import { FederationOptionError } from "./errors.ts";
import { createFederation } from "./federation.ts";
import type { InboxMessage } from "../activitypub/inbox/message.ts";
import { RecordingQueue, registerTestActor, testKeyPair } from "./testdata/test-support.ts";

/** Far longer than a short limit plus its grace period should ever take. */
const GENEROUS_MS = 10_000;

test("the time limit options are checked, naming the option, and take null for none", () => {
  const cases: [string, unknown][] = [
    ["taskTimeout", { seconds: 0 }],
    ["inboxTimeout", "soon"],
    ["outboxTimeout", { days: 30 }],
    ["timeoutGracePeriod", { seconds: -1 }],
    ["timeoutGracePeriod", null],
  ];
  for (const [option, value] of cases) {
    const error = assertThrows(
      () => createFederation<void>({ kv: new MemoryKvStore(), [option]: value }),
      FederationOptionError,
      `The ${option} option`,
    );
    assertEquals(error.option, option);
  }
  createFederation<void>({
    kv: new MemoryKvStore(),
    taskTimeout: null,
    inboxTimeout: null,
    outboxTimeout: null,
    timeoutGracePeriod: { seconds: 0 },
  });
});

test("a task's own timeout overrides the federation's taskTimeout, and null lifts it", async () => {
  const queue = new RecordingQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    taskTimeout: { milliseconds: 100 },
    timeoutGracePeriod: { milliseconds: 100 },
    taskRetryPolicy: () => null,
  });
  const events: MessageEvent[] = [];
  const both = deferred();
  const record = (event: MessageEvent) => {
    events.push(event);
    if (events.length === 2) both.resolve();
  };
  federation.on("completed", record);
  federation.on("failed", record);
  const patient = federation.defineTask("patient", {
    schema: z.object({}),
    timeout: null,
    // Outlives the federation's limit, then returns.
    handler: () => new Promise<void>((resolve) => setTimeout(resolve, 300)),
  });
  const hasty = federation.defineTask("hasty", {
    schema: z.object({}),
    timeout: { milliseconds: 50 },
    handler: (ctx) =>
      new Promise<void>((_, reject) =>
        ctx.task.signal.addEventListener("abort", () => reject(ctx.task.signal.reason))
      ),
  });
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await withLogs(async () => {
      const ctx = federation.createContext(new URL("https://example.com/"), undefined);
      await ctx.enqueueTask(patient, {});
      await ctx.enqueueTask(hasty, {});
      await within(both.promise, "both tasks to finish", GENEROUS_MS);
    });
  } finally {
    controller.abort();
    await worker;
    await queue[Symbol.asyncDispose]();
  }
  const [first, second] = events;
  assertEquals([first.taskName, first.type], ["patient", "completed"]);
  assertEquals([second.taskName, second.type], ["hasty", "failed"]);
  assert(second.type === "failed" && second.reason === "timeout");
  assertInstanceOf(second.error, HandlerTimeoutError);
  assertEquals(second.error.timeoutMs, 50);
  assertEquals(second.error.taskName, "hasty");
});

test("an inbox listener's ctx.signal aborts at inboxTimeout, its onError sees why, and the activity is retried with reason timeout", async () => {
  const inbox = new RecordingQueue({ deliver: false });
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox },
    manuallyStartQueue: true,
    inboxTimeout: { milliseconds: 100 },
    timeoutGracePeriod: { milliseconds: 100 },
  });
  const errors: unknown[] = [];
  federation.setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(Follow, (ctx) =>
      new Promise<void>((_, reject) => {
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
      }))
    .onError((_ctx, error) => void errors.push(error));
  const events: MessageEvent[] = [];
  federation.on("retrying", (event) => void events.push(event));
  const message: InboxMessage = {
    type: "inbox",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    activity: await new Follow({
      id: new URL("https://remote.example/follows/1"),
      actor: new URL("https://remote.example/users/bob"),
      object: new URL("https://example.com/users/alice"),
    }).toJsonLd() as Record<string, unknown>,
    identifier: "alice",
  };
  await withLogs(() =>
    within(federation.processQueuedMessage(undefined, message), "the inbox message", GENEROUS_MS)
  );
  assertEquals(errors.length, 1);
  assertInstanceOf(errors[0], HandlerTimeoutError);
  const [event] = events;
  assert(event.type === "retrying" && event.reason === "timeout" && event.abandoned === false);
  assertEquals(event.kind, "inbox");
  assertEquals(inbox.enqueued.map((record) => record.message.attempt), [1]);
});

test("a delivery to an inbox that never answers is aborted at outboxTimeout and fails with reason timeout", async () => {
  // A tarpit: reads the request, never answers.
  const server = await startTestServer(() => new Promise<Response>(() => {}));
  // Generated before the clock starts: the limit must pass while the
  // request is in flight, not while a key is made.
  await testKeyPair();
  const outbox = new RecordingQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { outbox },
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxTimeout: { seconds: 2 },
    // Long, so that a loaded machine cannot make an honoured abort look
    // abandoned; the event comes as soon as the request is aborted.
    timeoutGracePeriod: { seconds: 60 },
    outboxRetryPolicy: () => null,
  });
  registerTestActor(federation);
  const failed = deferred<MessageEvent>();
  federation.on("failed", (event) => failed.resolve(event));
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await withLogs(async () => {
      await federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
        { identifier: "alice" },
        { id: null, inboxId: new URL("/inbox", server.url) },
        new Create({ actor: new URL("https://example.com/users/alice") }),
      );
      const event = await within(
        failed.promise,
        "the delivery to time out",
        GENEROUS_MS + 60_000,
      );
      assert(event.type === "failed" && event.reason === "timeout");
      // The request was aborted through the signal, well within the grace.
      assertEquals(event.abandoned, false);
      assertEquals(event.kind, "outbox");
    });
    await server.waitForRequests(1);
  } finally {
    controller.abort();
    await worker;
    await server.close();
    await outbox[Symbol.asyncDispose]();
  }
});
