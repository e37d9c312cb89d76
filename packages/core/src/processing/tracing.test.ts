import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { hasTraceContext, withSpan } from "./tracing.ts";

test("withSpan() ends a recorded span when the work settles and records what it threw", async () => {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    .getTracer("test");
  const value = await withSpan(tracer, "ok", { kind: SpanKind.CONSUMER }, (span) => {
    assert(span.isRecording());
    assertEquals(exporter.getFinishedSpans().length, 0, "not ended while the work runs");
    return Promise.resolve(42);
  });
  assertEquals(value, 42);
  await assertRejects(
    () =>
      withSpan(tracer, "fails", { kind: SpanKind.CONSUMER }, () => Promise.reject(new Error("x"))),
    Error,
    "x",
  );
  await assertRejects(
    () =>
      withSpan(tracer, "throws", { kind: SpanKind.CONSUMER }, () => {
        throw new Error("y");
      }),
    Error,
    "y",
  );
  const spans = exporter.getFinishedSpans();
  assertEquals(spans.map((span) => span.name), ["ok", "fails", "throws"]);
  assertEquals(spans.map((span) => span.status.code), [
    SpanStatusCode.UNSET,
    SpanStatusCode.ERROR,
    SpanStatusCode.ERROR,
  ]);
  assertEquals(spans[1].events[0]?.name, "exception");
});

test("withSpan() runs the work with a span that records nothing when no provider is registered", async () => {
  // The global provider: a proxy to the no-op tracer until one is set.
  const tracer = trace.getTracer("test");
  let seen = false;
  const value = await withSpan(tracer, "noop", { kind: SpanKind.CONSUMER }, (span) => {
    seen = !span.isRecording();
    return Promise.resolve("done");
  });
  assertEquals([value, seen], ["done", true]);
  await assertRejects(
    () =>
      withSpan(tracer, "noop", { kind: SpanKind.CONSUMER }, () => Promise.reject(new Error("z"))),
    Error,
    "z",
  );
  // A throw, too, comes back as a rejection rather than out of the call.
  const thrown = withSpan(tracer, "noop", { kind: SpanKind.CONSUMER }, () => {
    throw new Error("w");
  });
  await assertRejects(() => thrown, Error, "w");
});

test("hasTraceContext() tells a span with a trace to pass on from the no-op tracer's", () => {
  const noop = trace.getTracer("test").startSpan("noop");
  assertEquals(hasTraceContext(noop), false);
  const recorded = new BasicTracerProvider().getTracer("test").startSpan("recorded");
  assertEquals(hasTraceContext(recorded), true);
  // Not recording, but inside a remote trace: its context is passed on.
  const remote = trace.wrapSpanContext({
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: 0,
  });
  assertEquals([remote.isRecording(), hasTraceContext(remote)], [false, true]);
  const malformed = trace.wrapSpanContext({
    traceId: "0af7651916cd43dd8448eb211c80319z",
    spanId: "b7ad6b7169203331",
    traceFlags: 0,
  });
  assertEquals(hasTraceContext(malformed), false);
});
