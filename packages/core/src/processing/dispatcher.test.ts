import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { trace } from "@opentelemetry/api";
import type { MessageQueue } from "../queue/message-queue.ts";
import type { RetryPolicy } from "../retry/retry-policy.ts";
import { millisecondsToDuration } from "../time/duration.ts";
import { withLogs } from "@fedify/fixture";
import { MessageDispatcher, type MessageKindHandler, RetryNotStoredError } from "./dispatcher.ts";
import { MalformedMessageError, PermanentError, PoisonMessageError } from "./errors.ts";
import { type MessageEvent, MessageEventHub } from "./events.ts";
import { getFedworkTracer } from "./tracing.ts";
import {
  RecordingQueue,
  type TestMessage as SharedTestMessage,
  testMessage,
} from "./testdata/test-messages.ts";

type TestMessage = SharedTestMessage<"ok" | "fail" | "permanent" | "malformed" | "unhandled">;

const fixedDelay = (ms: number, maxAttempts = 3): RetryPolicy => ({ attempts }) =>
  attempts >= maxAttempts ? null : millisecondsToDuration(ms);

function createDispatcher(retryQueue?: MessageQueue) {
  const events: MessageEvent[] = [];
  const hub = new MessageEventHub();
  for (const type of ["completed", "unhandled", "retrying", "failed", "dropped"] as const) {
    hub.on(type, (event) => void events.push(event));
  }
  const runs: TestMessage[] = [];
  const dispatcher = new MessageDispatcher<void>(getFedworkTracer(trace.getTracerProvider()), hub);
  const handler: MessageKindHandler<void, TestMessage> = {
    check(message) {
      if (!("behaviour" in message)) throw new MalformedMessageError("has no behaviour");
      return message as TestMessage;
    },
    run(message) {
      runs.push(message);
      switch (message.behaviour) {
        case "fail":
          return Promise.reject(new Error("transient"));
        case "permanent":
          return Promise.reject(new PermanentError("never again"));
        case "malformed":
          return Promise.reject(new MalformedMessageError("cannot be read"));
        case "unhandled":
          return Promise.resolve({ type: "unhandled", reason: "nobody listens" });
        default:
          return Promise.resolve();
      }
    },
    retryPolicy: () => fixedDelay(250),
    retryQueue: () => retryQueue,
  };
  dispatcher.register("test", handler);
  const run = { contextData: undefined, signal: new AbortController().signal };
  return { dispatcher, events, runs, run };
}

test("the dispatcher turns each kind of handler result into its outcome", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, run } = createDispatcher();
  await withLogs(async () => {
    assertEquals((await dispatcher.dispatch(testMessage("ok"), run, { queue })).type, "completed");
    const retrying = await dispatcher.dispatch(testMessage("fail"), run, { queue });
    assert(retrying.type === "retrying" && retrying.delay?.total("millisecond") === 250);
    const exhausted = await dispatcher.dispatch(testMessage("fail", 2), run, { queue });
    assert(exhausted.type === "failed" && exhausted.reason === "exhausted");
    const permanent = await dispatcher.dispatch(testMessage("permanent"), run, { queue });
    assert(permanent.type === "failed" && permanent.reason === "permanent");
    const malformed = await dispatcher.dispatch(testMessage("malformed"), run, { queue });
    assert(malformed.type === "dropped" && malformed.reason === "cannot be read");
  });
  assertEquals(events.map((event) => event.type), [
    "completed",
    "retrying",
    "failed",
    "failed",
    "dropped",
  ]);
  // Only the retrying outcome stored a retry, with attempt + 1 and the delay.
  assertEquals(queue.enqueued.length, 1);
  assertEquals(queue.enqueued[0].message.attempt, 1);
  assertEquals(queue.enqueued[0].options?.delay?.toString(), "PT0.25S");
});

test("the dispatcher drops what is not a Fedwork message or has no handler, and never throws for it", async () => {
  const { dispatcher, events, runs, run } = createDispatcher();
  await withLogs(async () => {
    for (const junk of [null, "text", 42, { type: "test" }, { id: "x", attempt: -1 }]) {
      assertEquals((await dispatcher.dispatch(junk, run)).type, "dropped");
    }
    const unknown = await dispatcher.dispatch({ ...testMessage("ok"), type: "mystery" }, run);
    assert(unknown.type === "dropped" && unknown.reason.includes("mystery"));
    const { behaviour: _, ...unchecked } = testMessage("ok");
    const bad = await dispatcher.dispatch(unchecked, run);
    assert(bad.type === "dropped" && bad.reason === "has no behaviour");
  });
  assertEquals(runs.length, 0);
  assertEquals(events.map((event) => event.kind), ["mystery", "test"]);
});

test("with a nativeRetrial queue a failure is rethrown to the queue, not re-enqueued", async () => {
  const queue = new RecordingQueue(true);
  const { dispatcher, events, run } = createDispatcher();
  await withLogs(async () => {
    await assertRejects(
      () => dispatcher.dispatch(testMessage("fail"), run, { queue }),
      Error,
      "transient",
    );
    // A permanent error is not rethrown: the queue must not retry it.
    const permanent = await dispatcher.dispatch(testMessage("permanent"), run, { queue });
    assertEquals(permanent.type, "failed");
  });
  assertEquals(queue.enqueued, []);
  assertEquals(events.map((event) => event.type), ["retrying", "failed"]);
});

test("a redelivery in place is preferred to a re-enqueue", async () => {
  const queue = new RecordingQueue();
  const redelivered: { message: TestMessage; delay: unknown }[] = [];
  const { dispatcher, run } = createDispatcher();
  await withLogs(async () => {
    const outcome = await dispatcher.dispatch(testMessage("fail"), run, {
      queue,
      redelivery: {
        redeliver(message, { delay }) {
          redelivered.push({ message, delay });
          return Promise.resolve();
        },
      },
    });
    assertEquals(outcome.type, "retrying");
  });
  assertEquals(queue.enqueued, []);
  assertEquals(redelivered.length, 1);
  assertEquals(redelivered[0].message.attempt, 1);
});

test("a retry that cannot be stored throws RetryNotStoredError so the queue keeps the message", async () => {
  const queue = new RecordingQueue(false, true);
  const { dispatcher, events, run } = createDispatcher();
  await withLogs(async () => {
    const error = await assertRejects(
      () => dispatcher.dispatch(testMessage("fail"), run, { queue }),
      RetryNotStoredError,
    );
    assertEquals((error.cause as Error).message, "unreachable");
  });
  const event = events[0];
  assert(event.type === "retrying" && event.delay === undefined);
});

test("a message processed outside a listener is retried into its kind's queue, or fails without one", async () => {
  const queue = new RecordingQueue();
  const withQueue = createDispatcher(queue);
  const withoutQueue = createDispatcher();
  await withLogs(async () => {
    assertEquals(
      (await withQueue.dispatcher.dispatch(testMessage("fail"), withQueue.run)).type,
      "retrying",
    );
    const outcome = await withoutQueue.dispatcher.dispatch(testMessage("fail"), withoutQueue.run);
    assert(outcome.type === "failed" && outcome.reason === "exhausted");
  });
  assertEquals(queue.enqueued.length, 1);
});

test("a message nothing handles ends unhandled, not completed, and is not retried", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, run } = createDispatcher();
  const outcome = await withLogs(() =>
    dispatcher.dispatch(testMessage("unhandled"), run, { queue })
  );
  assertEquals(outcome, { type: "unhandled", reason: "nobody listens" });
  assertEquals(events.map((event) => [event.type, "reason" in event ? event.reason : null]), [
    ["unhandled", "nobody listens"],
  ]);
  assertEquals(queue.enqueued.length, 0);
});

test("a message processed in-line for a caller who retries throws its error after a retrying event", async () => {
  const retryQueue = new RecordingQueue();
  const { dispatcher, events, run } = createDispatcher(retryQueue);
  await withLogs(() =>
    assertRejects(
      () => dispatcher.dispatch(testMessage("fail"), run, { callerRetries: true }),
      Error,
      "transient",
    )
  );
  assertEquals(events.map((event) => event.type), ["retrying"]);
  const [retrying] = events;
  assert(retrying.type === "retrying" && retrying.delay === undefined);
  // The caller retries: nothing is stored, not even into the kind's queue.
  assertEquals(retryQueue.enqueued.length, 0);
  // The outcomes that need no retry are returned as usual.
  const permanent = await withLogs(() =>
    dispatcher.dispatch(testMessage("permanent"), run, { callerRetries: true })
  );
  assert(permanent.type === "failed" && permanent.reason === "permanent");
});

test("the dispatcher lists the messages in flight, whatever order they finish in", async () => {
  const dispatcher = new MessageDispatcher<void>(
    getFedworkTracer(trace.getTracerProvider()),
    new MessageEventHub(),
  );
  const finish = new Map<string, () => void>();
  dispatcher.register(
    "test",
    {
      check: (message) => message as TestMessage,
      run: (message) => new Promise<void>((resolve) => finish.set(message.id, resolve)),
      retryPolicy: () => fixedDelay(250),
      retryQueue: () => undefined,
    } satisfies MessageKindHandler<void, TestMessage>,
  );
  const run = { contextData: undefined, signal: new AbortController().signal };
  const messages = [testMessage("ok"), testMessage("ok"), testMessage("ok"), testMessage("ok")];
  const outcomes = messages.map((message) => dispatcher.dispatch(message, run));
  const ids = () => dispatcher.inFlight.map((entry) => entry.id).sort();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assertEquals(ids(), messages.map((m) => m.id).sort());
  assertEquals(dispatcher.inFlight[0].kind, "test");
  // The first and third finish: the others are still listed, once each.
  for (const index of [0, 2]) {
    finish.get(messages[index].id)!();
    await outcomes[index];
  }
  assertEquals(ids(), [messages[1].id, messages[3].id].sort());
  finish.get(messages[3].id)!();
  finish.get(messages[1].id)!();
  await Promise.all(outcomes);
  assertEquals(dispatcher.inFlight, []);
});

test("the dispatcher quarantines a message handed out more than maxDeliveries times without running it", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, runs, run } = createDispatcher();
  const redelivered: unknown[] = [];
  const redelivery = (deliveryCount: number) => ({
    deliveryCount,
    redeliver(message: unknown) {
      redelivered.push(message);
      return Promise.resolve();
    },
  });
  const logs = await withLogs(async (records) => {
    // The default limit is 5: the fifth hand-out still runs.
    const fifth = await dispatcher.dispatch(testMessage("ok"), run, {
      queue,
      redelivery: redelivery(5),
    });
    assertEquals(fifth.type, "completed");
    const sixth = await dispatcher.dispatch(testMessage("fail"), run, {
      queue,
      redelivery: redelivery(6),
    });
    assert(sixth.type === "failed" && sixth.reason === "poison");
    assert(sixth.error instanceof PoisonMessageError);
    assertEquals(sixth.error.deliveries, 6);
    assertEquals(sixth.error.maxDeliveries, 5);
    // A platform's own count (processQueuedMessage()) is read too.
    const pushed = await dispatcher.dispatch(testMessage("ok"), run, { queue, deliveryCount: 9 });
    assert(pushed.type === "failed" && pushed.reason === "poison");
    return records;
  });
  assertEquals(runs.length, 1, "a quarantined message must not run");
  assertEquals(redelivered, [], "a quarantined message is not retried");
  assertEquals(queue.enqueued.length, 0);
  assertEquals(events.map((event) => [event.type, "reason" in event ? event.reason : null]), [
    ["completed", null],
    ["failed", "poison"],
    ["failed", "poison"],
  ]);
  const warning = logs.find((record) => record.level === "warning");
  assert(warning != null, "the quarantine was not logged as a warning");
  assertEquals(warning.properties.deliveries, 6);
  assertEquals(warning.properties.maxDeliveries, 5);
  assertEquals(warning.properties.messageType, "test");
});

test("the dispatcher takes a kind handler's own maxDeliveries over its default", async () => {
  const hub = new MessageEventHub();
  const dispatcher = new MessageDispatcher<void>(getFedworkTracer(trace.getTracerProvider()), hub, {
    maxDeliveries: 10,
  });
  let ran = 0;
  dispatcher.register("test", {
    check: (message) => message as TestMessage,
    run: () => {
      ran++;
      return Promise.resolve();
    },
    retryPolicy: () => fixedDelay(1),
    retryQueue: () => undefined,
    maxDeliveries: (message: TestMessage) => message.behaviour === "fail" ? 1 : undefined,
  });
  const run = { contextData: undefined, signal: new AbortController().signal };
  const redelivery = { deliveryCount: 2, redeliver: () => Promise.resolve() };
  await withLogs(async () => {
    const own = await dispatcher.dispatch(testMessage("fail"), run, { redelivery });
    assert(own.type === "failed" && own.reason === "poison");
    const dflt = await dispatcher.dispatch(testMessage("ok"), run, { redelivery });
    assertEquals(dflt.type, "completed");
  });
  assertEquals(ran, 1);
});

test("observers see each attempt's message and outcome, and the listeners' own event on demand", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, run } = createDispatcher();
  const seen: { type: string; id: string; event?: MessageEvent; trace?: object }[] = [];
  // One observer reads only the outcome; the other reads the event too.
  dispatcher.observe((attempt) =>
    void seen.push({ type: attempt.outcome.type, id: attempt.message.id })
  );
  dispatcher.observe((attempt) => {
    if (attempt.outcome.type !== "completed") return;
    seen.push({
      type: "event",
      id: attempt.message.id,
      event: attempt.event,
      trace: attempt.trace,
    });
    assert(attempt.event === attempt.event, "the event is built once");
  });
  const ok = testMessage("ok");
  const failing = testMessage("fail");
  await withLogs(async () => {
    await dispatcher.dispatch(ok, run, { queue });
    await dispatcher.dispatch(failing, run, { queue });
  });
  assertEquals(seen.map(({ type, id }) => [type, id]), [
    ["completed", ok.id],
    ["event", ok.id],
    ["retrying", failing.id],
  ]);
  // The observer's event is the one the listener got, whole.
  assertEquals(events.length, 2);
  assert(seen[1].event === events[0]);
  assertEquals(events[0].messageId, ok.id);
  assertEquals(events[0].enqueuedAt.toISOString(), ok.started);
  assertEquals(seen[1].trace, {});
  const retrying = events[1];
  assert(retrying.type === "retrying" && retrying.reason === "error");
  assertEquals(retrying.messageId, failing.id);
});
