import {
  assert,
  assertEquals,
  assertFalse,
  assertMatch,
  assertRejects,
  assertStrictEquals,
  test,
} from "@fedify/fixture";
import { Note } from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import * as v from "valibot";
import { z } from "zod";
import type { MessageQueue, MessageQueueEnqueueOptions } from "../queue/message-queue.ts";
import { decodeTaskPayload } from "./codec/mod.ts";
import { enqueueTasks } from "./testdata/enqueue-tasks.ts";
import {
  TaskNotDefinedError,
  TaskPayloadEncodingError,
  TaskQueueNotConfiguredError,
  TaskValidationError,
} from "./errors.ts";
import type { TaskMessage } from "./message.ts";
import { TaskStore } from "./registry.ts";

interface Call {
  readonly method: "enqueue" | "enqueueMany";
  readonly messages: readonly TaskMessage[];
  readonly options?: MessageQueueEnqueueOptions;
}

/** A queue that records what it is given; the queue seam is what is tested. */
function recordingQueue(withEnqueueMany: boolean): MessageQueue & { calls: Call[] } {
  const calls: Call[] = [];
  const queue: MessageQueue & { calls: Call[] } = {
    calls,
    enqueue(message: TaskMessage, options?: MessageQueueEnqueueOptions) {
      calls.push({ method: "enqueue", messages: [message], options });
      return Promise.resolve();
    },
    listen: () => Promise.resolve(),
  };
  if (withEnqueueMany) {
    queue.enqueueMany = (messages: readonly TaskMessage[], options) => {
      calls.push({ method: "enqueueMany", messages, options });
      return Promise.resolve();
    };
  }
  return queue;
}

const documentLoader = (url: string) => Promise.reject(new Error(`no network: ${url}`));
const handler = () => {};

test("enqueueing a task builds one TaskMessage per payload", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("greet", { schema: z.object({ name: z.string() }), handler });
  const queue = recordingQueue(false);
  const before = Date.now();
  const messages = await enqueueTasks({
    registry,
    task,
    payloads: [{ name: "Alice" }],
    queues: { taskQueue: queue, resolution: "fallback" },
    baseUrl: new URL("https://example.com/"),
  });
  assertEquals(queue.calls.length, 1);
  assertEquals(queue.calls[0].method, "enqueue");
  const [message] = queue.calls[0].messages;
  assertStrictEquals(message, messages[0]);
  assertEquals(message.type, "task");
  assertMatch(message.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assertEquals(message.baseUrl, "https://example.com/");
  assertEquals(message.taskName, "greet");
  assertEquals(message.attempt, 0);
  assert(Date.parse(message.started) >= before - 1_000, message.started);
  assertEquals(new Date(message.started).toISOString(), message.started);
  assertFalse("orderingKey" in message);
  // The producer stamps the enqueue span's trace context; a first attempt
  // without a delay is due at its `started`, so it carries no due time.
  assertEquals(typeof message.traceContext, "object");
  assertFalse("dueAt" in message);
  assertEquals(await decodeTaskPayload(message.data, { documentLoader }), { name: "Alice" });
  assertEquals(JSON.parse(JSON.stringify(message)), message);
});

test("enqueueing a task passes delay and orderingKey to the queue and the message", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("later", { schema: z.number(), handler });
  const queue = recordingQueue(false);
  await enqueueTasks({
    registry,
    task,
    payloads: [1],
    options: { delay: { seconds: 30 }, orderingKey: "actor-1" },
    queues: { taskQueue: queue, resolution: "fallback" },
    baseUrl: "https://example.com/",
  });
  const { delay, orderingKey } = queue.calls[0].options as MessageQueueEnqueueOptions;
  assertEquals(orderingKey, "actor-1");
  assertEquals((delay as Temporal.Duration).total("second"), 30);
  assertEquals(queue.calls[0].messages[0].orderingKey, "actor-1");
});

test("enqueueing a task hands the queue a Temporal.Duration whatever form the delay took", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("later-forms", { schema: z.number(), handler });
  const queue = recordingQueue(false);
  for (const delay of [{ minutes: 5 }, "PT5M", Temporal.Duration.from({ minutes: 5 })]) {
    await enqueueTasks({
      registry,
      task,
      payloads: [1],
      options: { delay },
      queues: { taskQueue: queue, resolution: "fallback" },
      baseUrl: "https://example.com/",
    });
  }
  for (const call of queue.calls) {
    const delay = (call.options as MessageQueueEnqueueOptions).delay;
    // A queue written for Fedify calls delay.total(); a plain object has none.
    assertEquals(Object.prototype.toString.call(delay), "[object Temporal.Duration]");
    assertEquals((delay as Temporal.Duration).total("millisecond"), 300_000);
  }
});

test("enqueueing a task uses enqueueMany when the queue has it", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("many", { schema: z.number(), handler });
  const queue = recordingQueue(true);
  await enqueueTasks({
    registry,
    task,
    payloads: [1, 2, 3],
    options: { orderingKey: "k" },
    queues: { taskQueue: queue, resolution: "fallback" },
    baseUrl: "https://example.com/",
  });
  assertEquals(queue.calls.length, 1);
  assertEquals(queue.calls[0].method, "enqueueMany");
  assertEquals(queue.calls[0].options, { orderingKey: "k" });
  const payloads = await Promise.all(
    queue.calls[0].messages.map((m) => decodeTaskPayload(m.data, { documentLoader })),
  );
  assertEquals(payloads, [1, 2, 3]);
  assertEquals(new Set(queue.calls[0].messages.map((m) => m.id)).size, 3);
});

test("enqueueing a task falls back to parallel enqueue calls without enqueueMany", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("many", { schema: z.number(), handler });
  let pending = 0;
  let maxPending = 0;
  const releases: (() => void)[] = [];
  const enqueued: TaskMessage[] = [];
  const queue: MessageQueue = {
    enqueue(message: TaskMessage) {
      enqueued.push(message);
      pending++;
      maxPending = Math.max(maxPending, pending);
      return new Promise<void>((resolve) => {
        releases.push(() => {
          pending--;
          resolve();
        });
        // All three are in flight once the third arrives: release them.
        if (releases.length === 3) { for (const release of releases) release(); }
      });
    },
    listen: () => Promise.resolve(),
  };
  await enqueueTasks({
    registry,
    task,
    payloads: [1, 2, 3],
    queues: { taskQueue: queue, resolution: "fallback" },
    baseUrl: "https://example.com/",
  });
  assertEquals(enqueued.length, 3);
  assertEquals(maxPending, 3);
});

test("enqueueTaskMany validates all payloads before enqueueing any", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("strict", { schema: z.object({ n: z.number() }), handler });
  const queue = recordingQueue(true);
  const error = await assertRejects(
    () =>
      enqueueTasks({
        registry,
        task,
        payloads: [{ n: 1 }, { n: 2 }, { n: "three" }],
        queues: { taskQueue: queue, resolution: "fallback" },
        baseUrl: "https://example.com/",
      }),
    TaskValidationError,
    "n:",
  );
  assertEquals(error.issues.length, 1);
  assertEquals(queue.calls, []);
});

test("enqueueing a task rejects a payload that cannot be encoded naming its path, enqueueing nothing", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("callback", {
    schema: z.object({ items: z.array(z.unknown()) }),
    handler,
  });
  const queue = recordingQueue(true);
  const error = await assertRejects(
    () =>
      enqueueTasks({
        registry,
        task,
        payloads: [{ items: [] }, { items: [1, 2, { callback: () => {} }] }],
        queues: { taskQueue: queue, resolution: "fallback" },
        baseUrl: "https://example.com/",
      }),
    TaskPayloadEncodingError,
    "data.items[2].callback",
  );
  assertEquals(error.path, "data.items[2].callback");
  assertEquals(queue.calls, []);
});

test("enqueueing a task encodes the caller's input, not the schema's output", async () => {
  const registry = new TaskStore<void>();
  const zodTask = registry.defineTask("zod", {
    schema: z.object({ when: z.coerce.date(), n: z.string().transform((s) => s.length) }),
    handler,
  });
  const valibotTask = registry.defineTask("valibot", {
    schema: v.pipe(v.string(), v.transform((s) => s.toUpperCase())),
    handler,
  });
  const queue = recordingQueue(false);
  const queues = { taskQueue: queue, resolution: "fallback" } as const;
  const baseUrl = "https://example.com/";
  await enqueueTasks({
    registry,
    task: zodTask,
    payloads: [{ when: "2024-01-01T00:00:00.000Z", n: "abc" }],
    queues,
    baseUrl,
  });
  await enqueueTasks({ registry, task: valibotTask, payloads: ["quiet"], queues, baseUrl });
  const [zodData, valibotData] = await Promise.all(
    queue.calls.map((call) => decodeTaskPayload(call.messages[0].data, { documentLoader })),
  );
  assertEquals(zodData, { when: "2024-01-01T00:00:00.000Z", n: "abc" });
  assertEquals(valibotData, "quiet");
});

test("enqueueing a task rejects a handle the registry did not define", async () => {
  const registry = new TaskStore<void>();
  registry.defineTask("same", { schema: z.number(), handler });
  const other = new TaskStore<void>();
  const foreign = other.defineTask("same", { schema: z.number(), handler });
  const queue = recordingQueue(true);
  await assertRejects(
    () =>
      enqueueTasks({
        registry,
        task: foreign,
        payloads: [1],
        queues: { taskQueue: queue, resolution: "fallback" },
        baseUrl: "https://example.com/",
      }),
    TaskNotDefinedError,
    '"same"',
  );
  assertEquals(queue.calls, []);
});

test("enqueueing a task checks delay and orderingKey before enqueueing", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("opts", { schema: z.number(), handler });
  const queue = recordingQueue(true);
  const common = {
    registry,
    task,
    payloads: [1],
    queues: { taskQueue: queue, resolution: "fallback" as const },
    baseUrl: "https://example.com/",
  };
  await assertRejects(
    () => enqueueTasks({ ...common, options: { delay: { seconds: -5 } } }),
    RangeError,
    "delay",
  );
  await assertRejects(
    () => enqueueTasks({ ...common, options: { delay: "soon" } }),
    TypeError,
    "delay",
  );
  await assertRejects(
    () => enqueueTasks({ ...common, options: { orderingKey: 7 as never } }),
    TypeError,
    "orderingKey",
  );
  assertEquals(queue.calls, []);
});

test("enqueueing a task routes through the outbox queue unless strict", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("routed", { schema: z.number(), handler });
  const outboxQueue = recordingQueue(false);
  const common = { registry, task, payloads: [1], baseUrl: "https://example.com/" };
  await enqueueTasks({ ...common, queues: { outboxQueue, resolution: "fallback" } });
  assertEquals(outboxQueue.calls.length, 1);
  await assertRejects(
    () => enqueueTasks({ ...common, queues: { outboxQueue, resolution: "strict" } }),
    TaskQueueNotConfiguredError,
    '"routed"',
  );
  assertEquals(outboxQueue.calls.length, 1);
});

test("enqueueing a task uses the task's own queue over the federation's", async () => {
  const own = recordingQueue(false);
  const taskQueue = recordingQueue(false);
  const registry = new TaskStore<void>();
  const task = registry.defineTask("own", { schema: z.number(), handler, queue: own });
  await enqueueTasks({
    registry,
    task,
    payloads: [1],
    queues: { taskQueue, resolution: "fallback" },
    baseUrl: "https://example.com/",
  });
  assertEquals(own.calls.length, 1);
  assertEquals(taskQueue.calls.length, 0);
});

test("enqueueTaskMany awaits an async schema and enqueues nothing when one payload fails it", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("async", {
    schema: z.object({ n: z.number() }).refine(async ({ n }) => {
      await Promise.resolve();
      return n > 0;
    }, "n must be positive"),
    handler,
  });
  const queue = recordingQueue(true);
  await assertRejects(
    () =>
      enqueueTasks({
        registry,
        task,
        payloads: [{ n: 1 }, { n: -1 }, { n: 2 }],
        queues: { taskQueue: queue, resolution: "fallback" },
        baseUrl: "https://example.com/",
      }),
    TaskValidationError,
    "n must be positive",
  );
  assertEquals(queue.calls, []);
  const messages = await enqueueTasks({
    registry,
    task,
    payloads: [{ n: 1 }, { n: 2 }],
    queues: { taskQueue: queue, resolution: "fallback" },
    baseUrl: "https://example.com/",
  });
  assertEquals(messages.length, 2);
});

test("enqueueing a task gives payloads sharing a vocabulary object that object in every message", async () => {
  const registry = new TaskStore<void>();
  const task = registry.defineTask("fanout", {
    schema: z.object({ note: z.instanceof(Note), to: z.string() }),
    handler,
  });
  const note = new Note({ content: "to everyone" });
  const messages = await enqueueTasks({
    registry,
    task,
    payloads: ["a", "b"].map((to) => ({ note, to })),
    queues: { taskQueue: recordingQueue(true), resolution: "fallback" },
    baseUrl: "https://example.com/",
  });
  for (const [i, message] of messages.entries()) {
    const decoded = await decodeTaskPayload(message.data, { documentLoader }) as {
      note: Note;
      to: string;
    };
    assertEquals(decoded.to, ["a", "b"][i]);
    assertEquals(decoded.note.content?.toString(), "to everyone");
  }
});
