import { assert, assertEquals, assertRejects, test } from "@fedify/fixture";
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { withSpan } from "./tracing.ts";

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
});
