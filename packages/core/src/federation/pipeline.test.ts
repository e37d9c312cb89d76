// End-to-end tests of the processing pipeline through a federation and a
// real InProcessMessageQueue: permanent errors, lifecycle events, retries
// that cannot be stored, run information and graceful shutdown.
import { assert, assertEquals, assertRejects, deferred, test, within } from "@fedify/fixture";
import { Note } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { z } from "zod";
import { PermanentError } from "../processing/errors.ts";
import type { MessageEvent } from "../processing/events.ts";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueue, MessageQueueHandler } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { TaskQueueNotConfiguredError } from "../tasks/errors.ts";
import type { TaskRunInfo } from "../tasks/run-info.ts";
import { withLogs } from "@fedify/fixture";
import { createFederation, type Federation } from "./federation.ts";
import type { FederationOptions } from "./options.ts";
import { withWorkers } from "./testdata/test-support.ts";

const base = new URL("https://example.com/");
const fixedDelay = (ms: number, maxAttempts = 10): RetryPolicy => ({ attempts }) =>
  attempts >= maxAttempts ? null : millisecondsToDuration(ms);

function federationOn(
  queue: MessageQueue,
  options: Partial<FederationOptions<void>> = {},
): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { task: queue },
    manuallyStartQueue: true,
    ...options,
  });
}

/** Records every lifecycle event of a federation. */
function recordEvents(federation: Federation<void>): MessageEvent[] {
  const events: MessageEvent[] = [];
  for (const type of ["completed", "retrying", "failed", "dropped"] as const) {
    federation.on(type, (event) => void events.push(event));
  }
  return events;
}

test("a handler throwing PermanentError under a policy that would retry runs once and fails permanently", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, { taskRetryPolicy: fixedDelay(1) });
  const events = recordEvents(federation);
  let runs = 0;
  const onErrors: unknown[] = [];
  const failed = deferred<MessageEvent>();
  const task = federation.defineTask("doomed", {
    schema: z.string(),
    handler() {
      runs++;
      throw new PermanentError("the remote server is gone", { cause: new Error("410") });
    },
    onError(_ctx, error) {
      onErrors.push(error);
    },
    on: { failed: (event) => failed.resolve(event) },
  });
  await withLogs(() =>
    withWorkers(federation, async () => {
      await federation.createContext(base, undefined).enqueueTask(task, "x");
      const event = await within(failed.promise, "the failed event");
      assertEquals(event.type === "failed" && event.reason, "permanent");
      assertEquals(event.taskName, "doomed");
      assertEquals(event.attempt, 0);
    })
  );
  assertEquals(runs, 1);
  assertEquals(onErrors.length, 1);
  assert(onErrors[0] instanceof PermanentError);
  assertEquals(events.map((event) => event.type), ["failed"]);
});

test("failed fires exactly once, after the retry policy is exhausted, and retrying before it", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const events = recordEvents(federation);
  const failed = deferred();
  let runs = 0;
  const task = federation.defineTask("flaky", {
    schema: z.number(),
    retryPolicy: fixedDelay(5, 3),
    handler() {
      runs++;
      throw new Error(`failure ${runs}`);
    },
    on: { failed: () => failed.resolve() },
  });
  await withLogs(() =>
    withWorkers(federation, async () => {
      await federation.createContext(base, undefined).enqueueTask(task, 1);
      await within(failed.promise, "the failed event");
    })
  );
  assertEquals(runs, 3);
  assertEquals(events.map((event) => event.type), ["retrying", "retrying", "failed"]);
  assertEquals(events.map((event) => event.attempt), [0, 1, 2]);
  const last = events[2];
  assert(last.type === "failed" && last.reason === "exhausted");
  assertEquals((last.error as Error).message, "failure 3");
  const first = events[0];
  assert(first.type === "retrying" && first.delay?.total("millisecond") === 5);
  assert(events.every((event) => event.messageId === events[0].messageId));
});

test("an event listener that throws is logged and changes nothing", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  federation.on("retrying", () => {
    throw new Error("a broken metrics exporter");
  });
  const completed = deferred<MessageEvent>();
  let runs = 0;
  const task = federation.defineTask("once-flaky", {
    schema: z.number(),
    retryPolicy: fixedDelay(5),
    handler() {
      if (++runs === 1) throw new Error("first attempt fails");
    },
    on: {
      retrying: () => Promise.reject(new Error("a broken task hook")),
      completed: (event) => completed.resolve(event),
    },
  });
  await withLogs(async (records) => {
    await withWorkers(federation, async () => {
      await federation.createContext(base, undefined).enqueueTask(task, 1);
      const event = await within(completed.promise, "the completed event");
      assertEquals(event.attempt, 1);
    });
    const hookErrors = records.filter((record) =>
      record.level === "error" && String(record.rawMessage).includes("event listener threw")
    );
    assertEquals(hookErrors.length, 2);
  });
  assertEquals(runs, 2);
});

/**
 * Wraps a queue so that the first `failures` attempts to store a retry
 * fail, as when the engine is briefly unreachable: enqueue() rejects and
 * the handler's redelivery rejects.
 */
function failingRetryStore(inner: MessageQueue, failures: number): MessageQueue {
  let left = failures;
  const fail = () => {
    if (left <= 0) return false;
    left--;
    return true;
  };
  return {
    enqueue: (message, options) =>
      message.attempt > 0 && fail()
        ? Promise.reject(new Error("connection refused"))
        : inner.enqueue(message, options),
    listen: (handler: MessageQueueHandler, options) =>
      inner.listen((message, redelivery) =>
        handler(
          message,
          redelivery == null ? undefined : {
            redeliver: (next, redeliveryOptions) =>
              fail()
                ? Promise.reject(new Error("connection refused"))
                : redelivery.redeliver(next, redeliveryOptions),
          },
        ), options),
  };
}

test("a task whose retry cannot be stored is kept by the queue and runs again", async () => {
  await using inner = new InProcessMessageQueue({ redeliveryDelay: { milliseconds: 20 } });
  const queue = failingRetryStore(inner, 1);
  const federation = federationOn(queue);
  const events = recordEvents(federation);
  const completed = deferred();
  const attempts: number[] = [];
  const task = federation.defineTask("survivor", {
    schema: z.string(),
    retryPolicy: fixedDelay(5),
    handler(ctx) {
      attempts.push(ctx.task.attempt);
      if (attempts.length === 1) throw new Error("fails while the engine is down");
    },
    on: { completed: () => completed.resolve() },
  });
  await withLogs(() =>
    withWorkers(federation, async () => {
      await federation.createContext(base, undefined).enqueueTask(task, "keep me");
      await within(completed.promise, "the task to complete after all");
    })
  );
  // The first retry was not stored; the queue handed the message out again
  // as it was (attempt 0), and that run succeeded.
  assertEquals(attempts, [0, 0]);
  assertEquals(events.map((event) => event.type), ["retrying", "completed"]);
  const retrying = events[0];
  assert(retrying.type === "retrying" && retrying.delay === undefined);
});

test("processQueuedMessage() rejects when the retry cannot be enqueued", async () => {
  await using inner = new InProcessMessageQueue();
  const queue = failingRetryStore(inner, 1);
  const federation = federationOn(queue);
  const task = federation.defineTask("push", {
    schema: z.string(),
    retryPolicy: fixedDelay(5),
    handler() {
      throw new Error("fails");
    },
  });
  void task;
  await withLogs(async () => {
    await assertRejects(
      () =>
        federation.processQueuedMessage(undefined, {
          type: "task",
          id: crypto.randomUUID(),
          baseUrl: base.href,
          taskName: "push",
          data: '["x"]',
          started: new Date().toISOString(),
          attempt: 0,
          traceContext: {},
        }),
      Error,
      "could not be stored",
    );
  });
});

test("a task handler gets its attempt, message id, enqueue time and a signal that aborts at shutdown", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const started = deferred<TaskRunInfo>();
  let abortedInHandler = false;
  const task = federation.defineTask("long", {
    schema: z.string(),
    async handler(ctx) {
      started.resolve(ctx.task);
      await new Promise<void>((resolve) => {
        if (ctx.task.signal.aborted) resolve();
        ctx.task.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      abortedInHandler = ctx.task.signal.aborted;
    },
  });
  const before = Date.now();
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { signal: controller.signal });
  await federation.createContext(base, undefined).enqueueTask(task, "x");
  const info = await within(started.promise, "the handler to start");
  assertEquals(info.name, "long");
  assertEquals(info.attempt, 0);
  assert(/^[0-9a-f-]{36}$/.test(info.id), info.id);
  assert(info.enqueuedAt.getTime() >= before - 1000, String(info.enqueuedAt));
  assertEquals(info.signal.aborted, false);
  controller.abort();
  await within(running, "startQueue() to resolve after the handler finished");
  assertEquals(abortedInHandler, true);
});

test("startQueue() resolves after shutdownTimeout when a handler does not finish, naming it", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const started = deferred();
  const release = deferred();
  const task = federation.defineTask("stuck", {
    schema: z.string(),
    async handler() {
      started.resolve();
      await release.promise;
    },
  });
  try {
    await withLogs(async (records) => {
      const controller = new AbortController();
      const running = federation.startQueue(undefined, {
        signal: controller.signal,
        shutdownTimeout: { milliseconds: 100 },
      });
      await federation.createContext(base, undefined).enqueueTask(task, "x");
      await within(started.promise, "the handler to start");
      controller.abort();
      await within(running, "startQueue() to give up waiting");
      const warning = records.find((record) =>
        record.level === "warning" && String(record.rawMessage).includes("shutdown timeout")
      );
      assert(warning != null, "no warning about the shutdown timeout");
      const messages = warning.properties.messages as { kind: string }[];
      assertEquals(messages.map((message) => message.kind), ["task"]);
    });
  } finally {
    release.resolve();
  }
});

test('startQueue({ queue: "task" }) runs tasks on the outbox queue they fall back to', async () => {
  await using outbox = new InProcessMessageQueue();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { outbox },
    manuallyStartQueue: true,
  });
  const ran = deferred<string>();
  const task = federation.defineTask("fallback", {
    schema: z.string(),
    handler: (_ctx, data) => ran.resolve(data),
  });
  const controller = new AbortController();
  const running = federation.startQueue(undefined, { queue: "task", signal: controller.signal });
  await federation.createContext(base, undefined).enqueueTask(task, "on the outbox queue");
  assertEquals(await within(ran.promise, "the task"), "on the outbox queue");
  controller.abort();
  await within(running, "startQueue() to resolve");
});

test('startQueue({ queue: "task" }) with no queue for tasks throws naming the option', async () => {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue: { inbox: new InProcessMessageQueue() },
    manuallyStartQueue: true,
  });
  await assertRejects(
    () => federation.startQueue(undefined, { queue: "task" }),
    TaskQueueNotConfiguredError,
    "queue.task",
  );
});

test("federation.on() rejects an unknown event type and a listener that is not a function", () => {
  const federation = federationOn(new InProcessMessageQueue());
  let threw = 0;
  try {
    // @ts-expect-error: not an event type.
    federation.on("finished", () => {});
  } catch (error) {
    threw++;
    assert(String(error).includes("failed, dropped and cancelled"), String(error));
  }
  try {
    // @ts-expect-error: not a function.
    federation.on("failed", "log it");
  } catch (error) {
    threw++;
    assert(String(error).includes("must be a function"));
  }
  assertEquals(threw, 2);
});

test("a task whose vocabulary object cannot be loaded yet is retried, not dropped", async () => {
  await using queue = new InProcessMessageQueue();
  let loads = 0;
  const loader = (url: string) => {
    loads++;
    const document = preloadedContexts[url];
    if (document == null) return Promise.reject(new Error(`No network in tests: ${url}`));
    return Promise.resolve({ documentUrl: url, document, contextUrl: null });
  };
  let fail = false;
  const federation = federationOn(queue, {
    taskRetryPolicy: fixedDelay(5),
    documentLoader: (url) => {
      // Fails once, the first time a worker needs it, as a network error would.
      if (fail) {
        fail = false;
        return Promise.reject(new TypeError("fetch failed"));
      }
      return loader(url);
    },
  });
  const events = recordEvents(federation);
  const received = deferred<Note>();
  const task = federation.defineTask("relay-note", {
    schema: z.instanceof(Note),
    handler: (_ctx, note) => received.resolve(note),
  });
  // An object parsed from a document travels as that document and is parsed
  // again, contexts and all, on the worker.
  const note = await Note.fromJsonLd({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: "https://remote.example/notes/1",
    type: "Note",
    content: "From elsewhere",
  }, { documentLoader: loader });
  await withLogs(() =>
    withWorkers(federation, async () => {
      // Encoding a parsed object needs no loader: the first load is the worker's.
      fail = true;
      await federation.createContext(base, undefined).enqueueTask(task, note);
      const got = await within(received.promise, "the retried task");
      assertEquals(got.content?.toString(), "From elsewhere");
    })
  );
  assert(loads > 0);
  assertEquals(events.map((event) => event.type).slice(0, 2), ["retrying", "completed"]);
});
