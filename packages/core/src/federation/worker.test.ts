import { assertEquals, test } from "@fedify/fixture";
import { trace } from "@opentelemetry/api";
import { createExponentialBackoffPolicy } from "../retry/exponential-backoff.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { durationToMilliseconds } from "../time/duration.ts";
import type { Message } from "./message.ts";
import { deferred, RecordingQueue, withTimeout } from "./test-support.ts";
import { getFedworkTracer } from "./tracing.ts";
import { MessageWorker } from "./worker.ts";

function createMessage(fields: Record<string, unknown> = {}): Message {
  return {
    type: "task",
    id: crypto.randomUUID(),
    baseUrl: "https://example.com",
    taskName: "test",
    data: "[]",
    started: new Date().toISOString(),
    attempt: 0,
    traceContext: {},
    ...fields,
  } as Message;
}

/** Wraps a policy to resolve `gaveUp` when it returns null. */
function observePolicy(policy: RetryPolicy) {
  const gaveUp = deferred<number>();
  const observed: RetryPolicy = (context) => {
    const delay = policy(context);
    if (delay == null) gaveUp.resolve(context.attempts);
    return delay;
  };
  return { policy: observed, gaveUp: gaveUp.promise };
}

function createWorker(): MessageWorker<string> {
  return new MessageWorker<string>(getFedworkTracer(trace.getTracerProvider()));
}

test("a failed message is re-enqueued with attempt + 1 and the backoff delay until it gives up", async () => {
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const { policy, gaveUp } = observePolicy(
    createExponentialBackoffPolicy({
      initialDelay: { milliseconds: 20 },
      jitter: false,
      maxAttempts: 3,
    }),
  );
  const attempts: number[] = [];
  const worker = createWorker();
  worker.register("task", {
    handle: (message) => {
      attempts.push(message.attempt);
      throw new Error("always fails");
    },
    retryPolicy: () => policy,
    queue: () => queue,
  });
  const listening = worker.listen(queue, "data", controller.signal);
  try {
    const message = createMessage({ orderingKey: "k" });
    await queue.enqueue(message);
    assertEquals(await withTimeout(gaveUp, "the policy to give up"), 3);
    assertEquals(attempts, [0, 1, 2]);
    const retries = queue.enqueued.slice(1);
    assertEquals(retries.map((record) => record.message.attempt), [1, 2]);
    assertEquals(retries.map((record) => record.message.id), [message.id, message.id]);
    assertEquals(
      retries.map((record) => durationToMilliseconds(record.options.delay!)),
      [20, 40],
    );
    assertEquals(retries.map((record) => record.options.orderingKey), ["k", "k"]);
  } finally {
    controller.abort();
    await listening;
    await queue[Symbol.asyncDispose]();
  }
});

test("with a nativeRetrial queue a failure is rethrown to the queue, not re-enqueued", async () => {
  const queue = new RecordingQueue({ nativeRetrial: true });
  const controller = new AbortController();
  const worker = createWorker();
  worker.register("task", {
    handle: () => Promise.reject(new Error("boom")),
    retryPolicy: () => () => ({ milliseconds: 1 }) as never,
    queue: () => queue,
  });
  const listening = worker.listen(queue, "data", controller.signal);
  try {
    await queue.enqueue(createMessage());
    await queue.waitUntil(() => queue.handlerErrors.length > 0, "the rethrown error");
    assertEquals((queue.handlerErrors[0] as Error).message, "boom");
    assertEquals(queue.enqueued.length, 1);
  } finally {
    controller.abort();
    await listening;
    await queue[Symbol.asyncDispose]();
  }
});

test("unknown, malformed and failing messages never stop the worker", async () => {
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const done = deferred<string>();
  const worker = createWorker();
  worker.register("task", {
    handle: (message) => {
      const name = (message as { taskName: string }).taskName;
      if (name === "fails") throw new Error("handler failure");
      done.resolve(name);
      return Promise.resolve();
    },
    retryPolicy: () => () => null,
    queue: () => queue,
  });
  const listening = worker.listen(queue, "data", controller.signal);
  try {
    await queue.enqueue(createMessage({ type: "bogus" }));
    await queue.enqueue("not a message");
    await queue.enqueue(createMessage({ taskName: "fails" }));
    await queue.enqueue(createMessage({ taskName: "last" }));
    assertEquals(await withTimeout(done.promise, "the last message"), "last");
    // Nothing was rethrown to the queue and nothing re-enqueued.
    assertEquals([queue.handlerErrors.length, queue.enqueued.length], [0, 4]);
  } finally {
    controller.abort();
    await listening;
    await queue[Symbol.asyncDispose]();
  }
});

test("a message processed outside a listener is retried into its handler's queue", async () => {
  const queue = new RecordingQueue({ deliver: false });
  const worker = createWorker();
  worker.register("task", {
    handle: () => Promise.reject(new Error("fails")),
    retryPolicy: () => createExponentialBackoffPolicy({ jitter: false }),
    queue: () => queue,
  });
  await worker.process(createMessage({ attempt: 2 }), "data");
  assertEquals(queue.enqueued.map((record) => record.message.attempt), [3]);
  assertEquals(durationToMilliseconds(queue.enqueued[0].options.delay!), 4_000);
});
