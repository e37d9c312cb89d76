// Time limits at the dispatcher: one handler per behaviour (honours its
// signal, ignores it, finishes in time), whatever the message kind.
import {
  assert,
  assertEquals,
  assertInstanceOf,
  assertRejects,
  assertThrows,
  deferred,
  test,
  waitUntil,
  within,
  withLogs,
} from "@fedify/fixture";
import { trace } from "@opentelemetry/api";
import { millisecondsToDuration } from "../time/duration.ts";
import { MessageDispatcher } from "./dispatcher.ts";
import { HandlerTimeoutError } from "./errors.ts";
import { type MessageEvent, MessageEventHub } from "./events.ts";
import { timeLimitToMilliseconds } from "./time-limit.ts";
import { getFedworkTracer } from "./tracing.ts";
import {
  RecordingQueue,
  type TestMessage as SharedTestMessage,
  testMessage,
} from "./testdata/test-messages.ts";

const LIMIT_MS = 100;
const GRACE_MS = 100;
/** Far longer than a limit plus its grace period should ever take. */
const GENEROUS_MS = LIMIT_MS + GRACE_MS + 10_000;

type Behaviour = (signal: AbortSignal) => Promise<void>;

type TestMessage = SharedTestMessage;

/** A dispatcher whose `test` kind runs the named behaviour with a time limit. */
function createDispatcher(
  behaviours: Record<string, Behaviour>,
  options: { readonly limitMs?: number | null; readonly maxAttempts?: number } = {},
) {
  const events: MessageEvent[] = [];
  const hub = new MessageEventHub();
  for (const type of ["completed", "retrying", "failed", "dropped"] as const) {
    hub.on(type, (event) => void events.push(event));
  }
  const signals: AbortSignal[] = [];
  const dispatcher = new MessageDispatcher<void>(
    getFedworkTracer(trace.getTracerProvider()),
    hub,
    { timeoutGracePeriodMs: GRACE_MS },
  );
  dispatcher.register<TestMessage>("test", {
    check: (message) => message as TestMessage,
    run(message, run) {
      signals.push(run.signal);
      return behaviours[message.behaviour](run.signal);
    },
    retryPolicy: () => ({ attempts }) =>
      attempts >= (options.maxAttempts ?? 3) ? null : millisecondsToDuration(10),
    retryQueue: () => undefined,
    timeout: () => options.limitMs === undefined ? LIMIT_MS : options.limitMs,
  });
  const shutdown = new AbortController();
  const run = { contextData: undefined, signal: shutdown.signal };
  return { dispatcher, events, signals, run, shutdown };
}

/** Rejects with the signal's reason once it aborts. */
const honour: Behaviour = (signal) =>
  new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));

/** Awaits a promise nobody resolves. */
const ignore: Behaviour = () => new Promise(() => {});

test("a handler that honours its signal is timed out, retried with reason timeout and not abandoned", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, signals, run } = createDispatcher({ honour });
  await withLogs(async (logs) => {
    const outcome = await within(
      dispatcher.dispatch(testMessage("honour"), run, { queue }),
      "the timed-out attempt's outcome",
      GENEROUS_MS,
    );
    assert(outcome.type === "retrying" && outcome.reason === "timeout");
    assertInstanceOf(outcome.error, HandlerTimeoutError);
    assertEquals(outcome.error.timeoutMs, LIMIT_MS);
    assertEquals(logs.filter((log) => log.level === "warning").length, 1, "only the retry");
  });
  assertInstanceOf(signals[0].reason, HandlerTimeoutError);
  const [event] = events;
  assert(event.type === "retrying" && event.reason === "timeout");
  assertEquals(event.abandoned, false);
  assertEquals(queue.enqueued.length, 1);
  assertEquals(queue.enqueued[0].message.attempt, 1);
});

test("a handler that ignores its signal is abandoned after the grace period, logged once and left running", async () => {
  const queue = new RecordingQueue();
  const { dispatcher, events, run } = createDispatcher({ ignore });
  await withLogs(async (logs) => {
    const outcome = await within(
      dispatcher.dispatch(testMessage("ignore"), run, { queue }),
      "the abandoned attempt's outcome",
      GENEROUS_MS,
    );
    assert(outcome.type === "retrying" && outcome.reason === "timeout");
    const abandonment = logs.filter((log) =>
      log.level === "warning" && String(log.rawMessage).includes("ignored its signal")
    );
    assertEquals(abandonment.length, 1);
    assertEquals(abandonment[0].properties.timeoutMs, LIMIT_MS);
  });
  const [event] = events;
  assert(event.type === "retrying" && event.reason === "timeout");
  assertEquals(event.abandoned, true);
  assertEquals(dispatcher.inFlight, [], "the worker no longer counts it as running");
});

test("a handler that settles after it was abandoned changes nothing", async () => {
  const release = deferred<void>();
  const settledLate = deferred<void>();
  const { dispatcher, events, run } = createDispatcher({
    late: async (signal) => {
      await release.promise;
      settledLate.resolve();
      throw signal.reason;
    },
  });
  await withLogs(async (logs) => {
    const outcome = await within(
      dispatcher.dispatch(testMessage("late"), run),
      "the abandoned attempt's outcome",
      GENEROUS_MS,
    );
    // Without a retry queue the timeout fails the message for good.
    assert(outcome.type === "failed" && outcome.reason === "timeout");
    release.resolve();
    await settledLate.promise;
    await waitUntil(
      () => logs.some((log) => String(log.rawMessage).includes("settled {lateMs} ms")),
      { what: "the debug record of the late settlement", intervalMs: 10 },
    );
  });
  assertEquals(events.map((event) => event.type), ["failed"]);
  const [event] = events;
  assert(event.type === "failed" && event.abandoned === true);
});

test("a handler that returns after its signal aborted still counts as timed out", async () => {
  const { dispatcher, events, run } = createDispatcher({
    swallow: (signal) =>
      new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve())),
  }, { maxAttempts: 1 });
  await withLogs(async () => {
    const outcome = await within(
      dispatcher.dispatch(testMessage("swallow"), run),
      "the timed-out attempt's outcome",
      GENEROUS_MS,
    );
    assert(outcome.type === "failed" && outcome.reason === "timeout");
  });
  const [event] = events;
  assert(event.type === "failed" && event.abandoned === false);
});

test("a handler that finishes within its limit completes and its signal never aborts", async () => {
  const { dispatcher, events, signals, run } = createDispatcher({
    quick: () => Promise.resolve(),
    failing: () => Promise.reject(new Error("transient")),
  }, { limitMs: 60_000 });
  await withLogs(async () => {
    assertEquals((await dispatcher.dispatch(testMessage("quick"), run)).type, "completed");
    const failed = await dispatcher.dispatch(testMessage("failing", 2), run);
    assert(failed.type === "failed" && failed.reason === "exhausted");
  });
  assert(signals.every((signal) => !signal.aborted));
  const [completed, failed] = events;
  assertEquals(completed.type, "completed");
  assert(failed.type === "failed" && failed.abandoned === undefined);
});

test("with a nativeRetrial queue a timeout is rethrown to the queue with reason timeout", async () => {
  const queue = new RecordingQueue(true);
  const { dispatcher, events, run } = createDispatcher({ honour });
  await withLogs(async () => {
    await assertRejects(
      () => dispatcher.dispatch(testMessage("honour"), run, { queue }),
      HandlerTimeoutError,
    );
  });
  assertEquals(queue.enqueued, []);
  const [event] = events;
  assert(event.type === "retrying" && event.reason === "timeout" && event.delay === undefined);
});

test("the worker's shutdown still aborts a handler with a time limit, as an ordinary failure", async () => {
  const { dispatcher, events, signals, run, shutdown } = createDispatcher({ honour }, {
    limitMs: 60_000,
    maxAttempts: 1,
  });
  await withLogs(async () => {
    const dispatched = dispatcher.dispatch(testMessage("honour"), run);
    await waitUntil(() => signals.length > 0, { what: "the handler to start", intervalMs: 5 });
    shutdown.abort(new Error("shutting down"));
    const outcome = await within(dispatched, "the outcome after shutdown");
    assert(outcome.type === "failed" && outcome.reason === "exhausted");
  });
  assertEquals((signals[0].reason as Error).message, "shutting down");
  assertEquals(events.length, 1);
});

test("time limits accept null for none and refuse zero, negative and overlong durations", () => {
  assertEquals(timeLimitToMilliseconds(null, "taskTimeout"), null);
  assertEquals(timeLimitToMilliseconds({ minutes: 2 }, "taskTimeout"), 120_000);
  assertEquals(timeLimitToMilliseconds("PT0.25S", "taskTimeout"), 250);
  for (const bad of [{ seconds: 0 }, { days: 25 }]) {
    assertThrows(() => timeLimitToMilliseconds(bad, "taskTimeout"), RangeError, "taskTimeout");
  }
  assertThrows(() => timeLimitToMilliseconds("-PT1S", "taskTimeout"), RangeError, "negative");
  assertThrows(
    () => timeLimitToMilliseconds("soon" as never, "inboxTimeout"),
    TypeError,
    "Pass null for no time limit",
  );
});
