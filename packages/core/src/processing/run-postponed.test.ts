import { assert, assertEquals, assertRejects, assertStrictEquals, test } from "@fedify/fixture";
import { withLogs } from "@fedify/fixture";
import { trace } from "@opentelemetry/api";
import { durationToMilliseconds, millisecondsToDuration } from "../time/duration.ts";
import { MessageDispatcher, RetryNotStoredError } from "./dispatcher.ts";
import { type MessageEvent, MessageEventHub } from "./events.ts";
import { RunPostponedError } from "./run-postponed.ts";
import { getFedworkTracer } from "./tracing.ts";
import { RecordingQueue, type TestMessage, testMessage } from "./testdata/test-messages.ts";

function postponingDispatcher(retryQueue?: RecordingQueue) {
  const events: MessageEvent[] = [];
  const hub = new MessageEventHub();
  hub.on("retrying", (event) => void events.push(event));
  const dispatcher = new MessageDispatcher<void>(getFedworkTracer(trace.getTracerProvider()), hub);
  let policyCalls = 0;
  dispatcher.register("test", {
    check: (message) => message as TestMessage,
    run: () => Promise.reject(new RunPostponedError("the host asked for a pause", 1500)),
    retryPolicy: () => () => {
      policyCalls++;
      return millisecondsToDuration(10);
    },
    retryQueue: () => retryQueue,
  });
  const run = { contextData: undefined, signal: new AbortController().signal };
  return { dispatcher, events, run, policyCalls: () => policyCalls };
}

test("a postponed message goes back to its queue with the same attempt, one more wait and its delay", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, run, policyCalls } = postponingDispatcher();
  const outcome = await withLogs(() =>
    dispatcher.dispatch({ ...testMessage("wait", 2), waits: 1 }, run, { queue })
  );
  assert(outcome.type === "retrying" && outcome.reason === "wait");
  assertEquals(outcome.delay?.total("millisecond"), 1500);
  assertEquals(queue.enqueued.length, 1);
  const [{ message, options }] = queue.enqueued;
  assertEquals([message.attempt, message.waits], [2, 2]);
  assertEquals(durationToMilliseconds(options!.delay!, "delay"), 1500);
  assertEquals(policyCalls(), 0);
  const [event] = events;
  assert(event.type === "retrying" && event.reason === "wait");
  assertEquals(event.attempt, 2);
  assert(event.error instanceof RunPostponedError);
});

test("a postponed message is re-enqueued by the dispatcher even on a natively retrying queue", async () => {
  const queue = new RecordingQueue(true);
  const { dispatcher, run } = postponingDispatcher();
  const outcome = await withLogs(() => dispatcher.dispatch(testMessage("wait"), run, { queue }));
  assert(outcome.type === "retrying" && outcome.reason === "wait");
  assertEquals(queue.enqueued.map((record) => record.message.attempt), [0]);
});

test("a postponed message without a queue is the caller's to retry, and an unstorable wait is the queue's", async () => {
  const { dispatcher, run } = postponingDispatcher();
  const error = await assertRejects(() =>
    withLogs(() => dispatcher.dispatch(testMessage("wait"), run, { callerRetries: true }))
  );
  assert(error instanceof RunPostponedError);
  const failing = new RecordingQueue(false, true);
  await assertRejects(
    () => withLogs(() => dispatcher.dispatch(testMessage("wait"), run, { queue: failing })),
    RetryNotStoredError,
  );
});

test("a postponed message run without a source waits in its kind's retry queue", async () => {
  const retryQueue = new RecordingQueue();
  const { dispatcher, run } = postponingDispatcher(retryQueue);
  const outcome = await withLogs(() => dispatcher.dispatch(testMessage("wait"), run));
  assert(outcome.type === "retrying" && outcome.reason === "wait");
  assertStrictEquals(retryQueue.enqueued.length, 1);
});
