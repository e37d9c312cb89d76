import {
  assert,
  assertEquals,
  assertRejects,
  assertStrictEquals,
  test,
  within,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import type { DocumentLoader } from "@fedify/vocab";
import { preloadedContexts } from "@fedify/vocab-runtime";
import { withLogs } from "@fedify/fixture";
import { type } from "arktype";
import * as v from "valibot";
import { z } from "zod";
import type { Context } from "../federation/context-api.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { durationToMilliseconds, millisecondsToDuration } from "../time/duration.ts";
import { encodeTaskPayload } from "./codec/mod.ts";
import { enqueueTasks } from "./testdata/enqueue-tasks.ts";
import type { TaskMessage } from "./message.ts";
import { TaskStore } from "./registry.ts";
import { createTaskMessageHandler } from "./handler.ts";
import { MessageDispatcher } from "../processing/dispatcher.ts";
import { MessageEventHub } from "../processing/events.ts";
import { getFedworkTracer } from "../processing/tracing.ts";
import { createExponentialBackoffPolicy } from "../retry/exponential-backoff.ts";
import { trace } from "@opentelemetry/api";

const documentLoader: DocumentLoader = (url) => {
  const document = preloadedContexts[url];
  if (document == null) return Promise.reject(new Error(`No network in tests: ${url}`));
  return Promise.resolve({ documentUrl: url, document, contextUrl: null });
};

interface Enqueued {
  readonly message: TaskMessage;
  readonly options?: MessageQueueEnqueueOptions;
}

/** A queue that records re-enqueued retries. */
function recordingQueue(nativeRetrial = false): MessageQueue & { enqueued: Enqueued[] } {
  const enqueued: Enqueued[] = [];
  return {
    nativeRetrial,
    enqueued,
    enqueue(message: TaskMessage, options?: MessageQueueEnqueueOptions) {
      enqueued.push({ message, options });
      return Promise.resolve();
    },
    listen: () => Promise.resolve(),
  };
}

interface AppData {
  readonly app: string;
}

/** A stand-in context: the worker only passes it through. */
function fakeContext(baseUrl: URL): Context<AppData> {
  return { data: { app: "test" }, origin: baseUrl.origin } as unknown as Context<AppData>;
}

async function message(
  taskName: string,
  payload: unknown,
  extra: Partial<TaskMessage> = {},
): Promise<TaskMessage> {
  return {
    type: "task",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com/",
    taskName,
    data: await encodeTaskPayload(payload),
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    ...extra,
  };
}

type Ctx = Context<AppData>;

interface ProcessOptions {
  readonly registry: TaskStore<AppData, Ctx>;
  readonly queue: MessageQueue;
  readonly retryPolicy?: RetryPolicy;
}

function options(
  registry: TaskStore<AppData, Ctx>,
  queue: MessageQueue,
  retryPolicy?: RetryPolicy,
): ProcessOptions {
  return { registry, queue, retryPolicy };
}

/**
 * Runs one task message through the dispatcher with the task handler, as
 * a worker listening to `options.queue` would, and names the outcome.
 */
async function processTaskMessage(
  msg: unknown,
  { registry, queue, retryPolicy }: ProcessOptions,
): Promise<"completed" | "dropped" | "retried" | "exhausted" | "permanent"> {
  const dispatcher = new MessageDispatcher<AppData>(
    getFedworkTracer(trace.getTracerProvider()),
    new MessageEventHub(),
  );
  dispatcher.register(
    "task",
    createTaskMessageHandler<AppData, Ctx>({
      registry,
      createContext: (_m, baseUrl) => fakeContext(baseUrl),
      documentLoader,
      retryPolicy: retryPolicy ?? createExponentialBackoffPolicy(),
      retryQueue: () => queue,
    }),
  );
  const outcome = await dispatcher.dispatch(
    msg,
    { contextData: { app: "test" }, signal: new AbortController().signal },
    { queue },
  );
  switch (outcome.type) {
    case "retrying":
      return "retried";
    case "failed":
      return outcome.reason === "permanent" ? "permanent" : "exhausted";
    case "unhandled":
      throw new Error("A task message cannot go unhandled.");
    case "cancelled":
      throw new Error("No task was cancelled.");
    default:
      return outcome.type;
  }
}

const fixedDelay = (ms: number, maxAttempts = 10): RetryPolicy => ({ attempts }) =>
  attempts >= maxAttempts ? null : millisecondsToDuration(ms);

test("processTaskMessage hands the schema's output and a context to the handler", async () => {
  const registry = new TaskStore<AppData, Ctx>();
  const received: { data?: unknown; ctx?: Context<AppData> } = {};
  registry.defineTask("stamp", {
    schema: z.object({ at: z.coerce.date(), n: z.string().transform(Number) }),
    handler(ctx, data) {
      received.ctx = ctx;
      received.data = data;
    },
  });
  const queue = recordingQueue();
  const outcome = await processTaskMessage(
    await message("stamp", { at: "2024-01-01T00:00:00.000Z", n: "7" }),
    options(registry, queue),
  );
  assertEquals(outcome, "completed");
  assertEquals(received.data, { at: new Date("2024-01-01T00:00:00.000Z"), n: 7 });
  assertEquals(received.ctx?.data, { app: "test" });
  assertEquals(received.ctx?.origin, "https://example.com");
  assertEquals(queue.enqueued, []);
});

test("processTaskMessage rebuilds vocabulary objects that the schema checks with instanceof", async () => {
  const registry = new TaskStore<AppData, Ctx>();
  let got: unknown;
  registry.defineTask("relay", {
    schema: z.object({
      activity: z.instanceof(Create),
      at: z.date(),
      seen: z.map(z.string(), z.boolean()),
    }),
    handler(_ctx, data) {
      got = data;
    },
  });
  const create = new Create({
    id: new URL("https://example.com/activities/1"),
    object: new Note({ content: "hello" }),
  });
  const outcome = await processTaskMessage(
    await message("relay", { activity: create, at: new Date(5), seen: new Map([["a", true]]) }),
    options(registry, recordingQueue()),
  );
  assertEquals(outcome, "completed");
  const data = got as { activity: Create; at: Date };
  assert(data.activity instanceof Create);
  assertEquals(await data.activity.toJsonLd(), await create.toJsonLd());
  assertEquals(data.at, new Date(5));
});

test("processTaskMessage drops a message for an unknown task with a warning", async () => {
  await withLogs(async (records) => {
    const queue = recordingQueue();
    const msg = await message("ghost", 1);
    const outcome = await processTaskMessage(msg, options(new TaskStore<AppData, Ctx>(), queue));
    assertEquals(outcome, "dropped");
    assertEquals(queue.enqueued, []);
    const warning = records.find((r) => r.level === "warning");
    assert(warning != null, "no warning was logged");
    assertEquals(warning.category, ["fedwork", "processing"]);
    assertEquals(warning.properties.taskName, "ghost");
    assertEquals(warning.properties.messageId, msg.id);
  });
});

test("processTaskMessage drops a malformed wire string without retry, logging the reason", async () => {
  await withLogs(async (records) => {
    const registry = new TaskStore<AppData, Ctx>();
    let ran = false;
    registry.defineTask("t", { schema: z.unknown(), handler: () => void (ran = true) });
    const queue = recordingQueue();
    const outcome = await processTaskMessage(
      { ...(await message("t", 1)), data: "{not devalue" },
      options(registry, queue),
    );
    assertEquals(outcome, "dropped");
    assertEquals(ran, false);
    assertEquals(queue.enqueued, []);
    const error = records.find((r) => r.level === "error");
    assert(error != null, "no error was logged");
    assertEquals(error.properties.taskName, "t");
    assert(
      String(error.properties.reason).includes("Cannot decode"),
      String(error.properties.reason),
    );
  });
});

test("processTaskMessage drops a payload that fails the schema without retry, logging the issues", async () => {
  await withLogs(async (records) => {
    const registry = new TaskStore<AppData, Ctx>();
    let ran = false;
    registry.defineTask("typed", {
      schema: z.object({ n: z.number() }),
      handler: () => void (ran = true),
      retryPolicy: fixedDelay(1),
    });
    const queue = recordingQueue();
    const outcome = await processTaskMessage(
      await message("typed", { n: "one" }),
      options(registry, queue),
    );
    assertEquals(outcome, "dropped");
    assertEquals(ran, false);
    assertEquals(queue.enqueued, []);
    const error = records.find((r) => r.level === "error");
    assert(error != null, "no error was logged");
    const issues = error.properties.issues as { path: unknown[]; message: string }[];
    assertEquals(issues.length, 1);
    assertEquals(issues[0].path, ["n"]);
    assert(String(error.properties.reason).includes("n: "), String(error.properties.reason));
  });
});

test("processTaskMessage drops a message whose schema throws instead of reporting issues", async () => {
  await withLogs(async (records) => {
    const registry = new TaskStore<AppData, Ctx>();
    let ran = false;
    const throwing = {
      "~standard": {
        version: 1 as const,
        vendor: "test",
        validate(): never {
          throw new Error("schema bug");
        },
      },
    };
    registry.defineTask("buggy", { schema: throwing, handler: () => void (ran = true) });
    const queue = recordingQueue();
    const outcome = await processTaskMessage(await message("buggy", 1), options(registry, queue));
    assertEquals(outcome, "dropped");
    assertEquals(ran, false);
    assertEquals(queue.enqueued, []);
    assert(
      records.some((r) =>
        r.level === "error" && String(r.properties.reason).includes("schema bug")
      ),
    );
  });
});

test("processTaskMessage drops a message that is not a task message", async () => {
  await withLogs(async (records) => {
    const outcome = await processTaskMessage(
      { type: "task", taskName: "x" } as unknown as TaskMessage,
      options(new TaskStore<AppData, Ctx>(), recordingQueue()),
    );
    assertEquals(outcome, "dropped");
    assert(records.some((r) => r.level === "error"));
  });
});

test("a failing handler calls onError, then re-enqueues attempt + 1 after the policy's delay", async () => {
  await withLogs(async () => {
    const registry = new TaskStore<AppData, Ctx>();
    const errors: { error: unknown; data: unknown; ctx: Context<AppData> }[] = [];
    const failure = new Error("boom");
    registry.defineTask("flaky", {
      schema: z.object({ n: z.number() }),
      handler() {
        throw failure;
      },
      onError(ctx, error, data) {
        errors.push({ ctx, error, data });
      },
    });
    const queue = recordingQueue();
    const msg = await message("flaky", { n: 1 }, { orderingKey: "k", attempt: 2 });
    const outcome = await processTaskMessage(msg, options(registry, queue, fixedDelay(1_500)));
    assertEquals(outcome, "retried");
    assertEquals(errors.length, 1);
    assertStrictEquals(errors[0].error, failure);
    assertEquals(errors[0].data, { n: 1 });
    assertEquals(errors[0].ctx.data, { app: "test" });
    assertEquals(queue.enqueued.length, 1);
    const { message: retry, options: retryOptions } = queue.enqueued[0];
    // The retry says when it becomes due, for the queue-wait metric.
    const { dueAt, ...rest } = retry as typeof msg & { dueAt?: string };
    assertEquals(rest, { ...msg, attempt: 3 });
    assertEquals(typeof dueAt, "string");
    assertEquals(retryOptions?.orderingKey, "k");
    assertEquals(retryOptions?.delay?.toString(), "PT1.5S");
  });
});

test("the retry policy sees the failed attempts and the time since the first attempt", async () => {
  const registry = new TaskStore<AppData, Ctx>();
  const seen: { attempts: number; elapsed: number }[] = [];
  registry.defineTask("watched", {
    schema: z.null(),
    handler() {
      throw new Error("no");
    },
    retryPolicy: ({ attempts, elapsedTime }) => {
      seen.push({ attempts, elapsed: elapsedTime.total({ unit: "millisecond" }) });
      return millisecondsToDuration(0);
    },
  });
  const started = new Date(Date.now() - 60_000).toISOString();
  const msg = await message("watched", null, { started, attempt: 4 });
  await withLogs(() => processTaskMessage(msg, options(registry, recordingQueue())));
  assertEquals(seen.length, 1);
  assertEquals(seen[0].attempts, 5);
  assert(seen[0].elapsed >= 60_000, `elapsed ${seen[0].elapsed} ms`);
});

test("a task's own retry policy overrides the federation's", async () => {
  await withLogs(async () => {
    const registry = new TaskStore<AppData, Ctx>();
    const fail = () => {
      throw new Error("fail");
    };
    registry.defineTask("own", { schema: z.null(), handler: fail, retryPolicy: fixedDelay(7_000) });
    registry.defineTask("default", { schema: z.null(), handler: fail });
    const queue = recordingQueue();
    const opts = options(registry, queue, fixedDelay(2_000));
    await processTaskMessage(await message("own", null), opts);
    await processTaskMessage(await message("default", null), opts);
    assertEquals(queue.enqueued.map((e) => e.options?.delay?.toString()), ["PT7S", "PT2S"]);
  });
});

test("without any retry policy a failed task is retried with exponential backoff", async () => {
  await withLogs(async () => {
    const registry = new TaskStore<AppData, Ctx>();
    registry.defineTask("plain", {
      schema: z.null(),
      handler() {
        throw new Error("fail");
      },
    });
    const queue = recordingQueue();
    assertEquals(
      await processTaskMessage(await message("plain", null), options(registry, queue)),
      "retried",
    );
    const delay = queue.enqueued[0].options?.delay;
    assert(delay != null, "no delay");
    const ms = durationToMilliseconds(delay);
    // The default policy starts at one second, jittered by up to ±50 %.
    assert(ms >= 500 && ms <= 1_500, `first retry after ${ms} ms`);
  });
});

test("a queue with native retrial gets the handler's error and no re-enqueue", async () => {
  await withLogs(async () => {
    const registry = new TaskStore<AppData, Ctx>();
    const failure = new Error("native");
    let onErrorCalls = 0;
    registry.defineTask("native", {
      schema: z.null(),
      handler() {
        throw failure;
      },
      onError() {
        onErrorCalls++;
      },
      retryPolicy: fixedDelay(1),
    });
    const queue = recordingQueue(true);
    const msg = await message("native", null);
    const thrown = await assertRejects(() => processTaskMessage(msg, options(registry, queue)));
    assertStrictEquals(thrown, failure);
    assertEquals(onErrorCalls, 1);
    assertEquals(queue.enqueued, []);
  });
});

test("an onError hook that throws is logged and does not stop the retry", async () => {
  await withLogs(async (records) => {
    const registry = new TaskStore<AppData, Ctx>();
    registry.defineTask("hooked", {
      schema: z.null(),
      handler() {
        throw new Error("handler");
      },
      onError() {
        throw new Error("hook");
      },
      retryPolicy: fixedDelay(10),
    });
    const queue = recordingQueue();
    const outcome = await processTaskMessage(
      await message("hooked", null),
      options(registry, queue),
    );
    assertEquals(outcome, "retried");
    assertEquals(queue.enqueued.length, 1);
    assert(
      records.some((r) => r.level === "error" && (r.properties.error as Error)?.message === "hook"),
      "the onError failure was not logged",
    );
  });
});

test("a task whose retry policy gives up is logged as exhausted with its attempts", async () => {
  await withLogs(async (records) => {
    const registry = new TaskStore<AppData, Ctx>();
    registry.defineTask("doomed", {
      schema: z.null(),
      handler() {
        throw new Error("always");
      },
      retryPolicy: fixedDelay(10, 3),
    });
    const queue = recordingQueue();
    const msg = await message("doomed", null, { attempt: 2 });
    const outcome = await processTaskMessage(msg, options(registry, queue));
    assertEquals(outcome, "exhausted");
    assertEquals(queue.enqueued, []);
    const exhausted = records.find((r) => r.level === "error" && r.properties.attempts === 3);
    assert(exhausted != null, "exhaustion was not logged");
    assertEquals(exhausted.properties.taskName, "doomed");
    assertEquals(exhausted.properties.messageId, msg.id);
  });
});

test("a task enqueued on an in-process queue runs, fails once and succeeds on the retry", async () => {
  await withLogs(async () => {
    await using queue = new InProcessMessageQueue();
    const registry = new TaskStore<AppData, Ctx>();
    const attempts: number[] = [];
    let resolveDone!: (data: { when: Date; note: Note }) => void;
    const done = new Promise<{ when: Date; note: Note }>((resolve) => resolveDone = resolve);
    const task = registry.defineTask("eventually", {
      schema: z.object({ when: z.coerce.date(), note: z.instanceof(Note) }),
      handler(_ctx, data) {
        attempts.push(attempts.length);
        if (attempts.length === 1) throw new Error("first attempt fails");
        resolveDone(data);
      },
      retryPolicy: fixedDelay(0),
    });
    const controller = new AbortController();
    const listening = queue.listen(
      async (msg: TaskMessage) => void await processTaskMessage(msg, options(registry, queue)),
      { signal: controller.signal },
    );
    await enqueueTasks({
      registry,
      task,
      payloads: [{ when: "2024-02-03T04:05:06.000Z", note: new Note({ content: "hi" }) }],
      queues: { taskQueue: queue, resolution: "strict" },
      baseUrl: "https://example.com/",
    });
    const data = await within(done, "the retried task to succeed");
    assertEquals(attempts.length, 2);
    assertEquals(data.when, new Date("2024-02-03T04:05:06.000Z"));
    assertEquals(data.note.content?.toString(), "hi");
    controller.abort();
    await within(listening, "listen() to resolve");
  });
});

test("transforming Zod, Valibot and ArkType schemas: the input travels, the handler gets the output", async () => {
  const registry = new TaskStore<AppData, Ctx>();
  const received = new Map<string, unknown>();
  const record = (name: string) => (_ctx: Context<AppData>, data: unknown) => {
    received.set(name, data);
  };
  const zodTask = registry.defineTask("zod", {
    schema: z.object({ at: z.coerce.date(), tags: z.string().transform((s) => s.split(",")) }),
    handler: record("zod"),
  });
  const valibotTask = registry.defineTask("valibot", {
    schema: v.pipe(v.string(), v.transform((s) => s.length)),
    handler: record("valibot"),
  });
  const arkTask = registry.defineTask("arktype", {
    schema: type({ n: "string.numeric.parse" }),
    handler: record("arktype"),
  });
  const queue = recordingQueue();
  const queues = { taskQueue: queue, resolution: "strict" } as const;
  const baseUrl = "https://example.com/";
  await enqueueTasks({
    registry,
    task: zodTask,
    payloads: [{ at: "2024-01-01T00:00:00.000Z", tags: "a,b" }],
    queues,
    baseUrl,
  });
  await enqueueTasks({ registry, task: valibotTask, payloads: ["four"], queues, baseUrl });
  await enqueueTasks({ registry, task: arkTask, payloads: [{ n: "42" }], queues, baseUrl });
  const messages = queue.enqueued.map((e) => e.message);
  queue.enqueued.length = 0;
  for (const msg of messages) {
    assertEquals(await processTaskMessage(msg, options(registry, queue)), "completed");
  }
  assertEquals(received.get("zod"), { at: new Date("2024-01-01T00:00:00.000Z"), tags: ["a", "b"] });
  assertEquals(received.get("valibot"), 4);
  assertEquals(received.get("arktype"), { n: 42 });
});

test("an async schema is awaited on the worker", async () => {
  const registry = new TaskStore<AppData, Ctx>();
  let got: unknown;
  registry.defineTask("async", {
    schema: z.string().refine(async (s) => {
      await Promise.resolve();
      return s.length > 2;
    }),
    handler(_ctx, data) {
      got = data;
    },
  });
  const queue = recordingQueue();
  assertEquals(
    await processTaskMessage(await message("async", "long"), options(registry, queue)),
    "completed",
  );
  assertEquals(got, "long");
  await withLogs(async () => {
    assertEquals(
      await processTaskMessage(await message("async", "no"), options(registry, queue)),
      "dropped",
    );
  });
  assertEquals(queue.enqueued, []);
});

test("a handler's thenable is awaited like a promise: its rejection retries the task", async () => {
  const registry = new TaskStore<AppData, Ctx>();
  let settledWith: unknown;
  registry.defineTask("thenable", {
    schema: z.object({ ok: z.boolean() }),
    handler(_ctx, { ok }) {
      // Not a Promise: an object with a then() that settles later.
      return {
        then(resolve: (value: undefined) => void, reject: (error: Error) => void) {
          setTimeout(() => {
            settledWith = ok;
            if (ok) resolve(undefined);
            else reject(new Error("the thenable rejected"));
          }, 10);
        },
      } as unknown as Promise<void>;
    },
  });
  const queue = recordingQueue();
  assertEquals(
    await processTaskMessage(await message("thenable", { ok: true }), options(registry, queue)),
    "completed",
  );
  assertStrictEquals(settledWith, true);
  await withLogs(async () => {
    assertEquals(
      await processTaskMessage(
        await message("thenable", { ok: false }),
        options(registry, queue, fixedDelay(5)),
      ),
      "retried",
    );
  });
  assertStrictEquals(settledWith, false);
  assertEquals(queue.enqueued.length, 1);
});
