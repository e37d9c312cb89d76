import { assert, assertEquals, test } from "@fedify/fixture";
import { Create } from "@fedify/vocab";
import { SpanKind } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { MemoryKvStore } from "../kv/memory-kv-store.ts";
import { createFederation } from "./federation.ts";
import type { OutboxMessage } from "../activitypub/outbox/messages.ts";
import { RecordingQueue, registerTestActor, startInboxServer } from "./testdata/test-support.ts";

test("the processing span's parent is the span that enqueued the message", async () => {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const server = await startInboxServer([202]);
  const queue = new RecordingQueue();
  const controller = new AbortController();
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    tracerProvider,
  });
  registerTestActor(federation);
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    await federation.createContext(new URL("https://example.com/"), undefined).sendActivity(
      { identifier: "alice" },
      { id: null, inboxId: new URL("/inbox", server.url) },
      new Create({ actor: new URL("https://example.com/users/alice") }),
    );
    await server.waitForRequests(1);
    // listen() resolves only after the running handler, and so its span, has ended.
    controller.abort();
    await worker;
    const spans = exporter.getFinishedSpans();
    const enqueue = spans.find((span) => span.name === "fedwork.queue.enqueue");
    const process = spans.find((span) => span.name === "fedwork.queue.process");
    assert(enqueue != null && process != null, "both spans were recorded");
    assertEquals(enqueue.kind, SpanKind.PRODUCER);
    assertEquals(process.kind, SpanKind.CONSUMER);
    assertEquals(process.spanContext().traceId, enqueue.spanContext().traceId);
    assertEquals(process.parentSpanContext?.spanId, enqueue.spanContext().spanId);
    const message = queue.enqueued[0].message as OutboxMessage;
    assertEquals(
      message.traceContext.traceparent,
      `00-${enqueue.spanContext().traceId}-${enqueue.spanContext().spanId}-01`,
    );
    assertEquals(process.attributes["fedwork.message.id"], message.id);
    assertEquals(process.attributes["fedwork.message.type"], "outbox");
  } finally {
    controller.abort();
    await worker;
    await server.close();
    await queue[Symbol.asyncDispose]();
    await tracerProvider.shutdown();
  }
});
