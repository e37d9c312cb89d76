// Webhooks as the seeds have them (0.3.0): header and retry-policy checks,
// their own retry policy, trace context and attemptsLeft; against real
// loopback receivers; and failed events of deliveries.  Enqueued events, headers on the request, static
// webhooks, re-probing and lastSuccessAt/lastFailureAt are tested on every
// store by @fedwork/testing's testWebhooks() (packages/testing/src/webhook-suite.ts).
import {
  assert,
  assertEquals,
  assertRejects,
  startTestServer,
  test,
  waitUntil,
} from "@fedify/fixture";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { Create, Note, Person } from "@fedify/vocab";
import { z } from "zod";
import { generateCryptoKeyPair } from "../../activitypub/actors/keys.ts";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import type { WebhookPayload } from "./types.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";

const base = new URL("https://example.com/");
const secret = "webhook-test-secret-0123456789";
const apiKey = "key-that-must-stay-secret-42";

function federationOn(
  queue: InProcessMessageQueue,
  options: Partial<FederationOptions<void>> = {},
): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    taskRetryPolicy: ({ attempts }) => attempts >= 1 ? null : millisecondsToDuration(1),
    ...options,
  });
}

test("addWebhook refuses headers Fedwork sets and bad retry policies, without quoting values", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const url = "https://hooks.example/fedwork";
  await assertRejects(
    () => federation.addWebhook({ url, events: ["failed"], secret, headers: { Host: "x" } }),
    TypeError,
    "set by Fedwork",
  );
  const error = await assertRejects(
    () =>
      federation.addWebhook({
        url,
        events: ["failed"],
        secret,
        headers: { "X-Key": `${apiKey}\r\nX-Evil: 1` },
      }),
    TypeError,
    "without line breaks",
  );
  assert(!(error as Error).message.includes(apiKey));
  await assertRejects(
    () =>
      federation.addWebhook({ url, events: ["failed"], secret, retryPolicy: { maxAttempts: 0 } }),
    TypeError,
    "maxAttempts",
  );
  await assertRejects(
    // @ts-expect-error: a function cannot be stored
    () => federation.addWebhook({ url, events: ["failed"], secret, retryPolicy: () => null }),
    TypeError,
    "retryPolicy",
  );
});

test("a webhook's own retry policy retries its requests and then gives up into the failed store", async () => {
  await using server = await startTestServer(() => new Response("down", { status: 503 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const job = federation.defineTask("job", { schema: z.object({}), handler: () => {} });
  await federation.addWebhook({
    url: server.url,
    events: ["completed"],
    secret,
    headers: { "X-API-Key": apiKey },
    retryPolicy: {
      maxAttempts: 3,
      initialDelay: { milliseconds: 5 },
      maxDelay: { milliseconds: 20 },
    },
  });
  await withWorkers(federation, async () => {
    await federation.createContext(base, undefined).enqueueTask(job, {});
    await waitUntil(async () => (await federation.listFailedTasks()).records.length === 1, {
      what: "the webhook task to fail for good",
    });
  });
  assertEquals(server.requests.length, 3);
  const [record] = (await federation.listFailedTasks()).records;
  assertEquals([record.taskName, record.reason], ["fedwork:webhook", "permanent"]);
  assert(!JSON.stringify(record).includes(apiKey), "no header value in the failed store");
  const [listed] = await federation.listWebhooks();
  assertEquals([listed.consecutiveFailures, listed.lastError], [3, "HTTP 503"]);
  assert(listed.lastFailureAt instanceof Date);
});

test("failed events say attemptsLeft, and a request's traceparent is the span the task ran in", async () => {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  await using server = await startTestServer(() => new Response(null, { status: 204 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, { tracerProvider });
  const flaky = federation.defineTask("flaky", {
    schema: z.object({}),
    handler: () => {
      throw new Error("always");
    },
  });
  await federation.addWebhook({ url: server.url, events: ["failed"], secret });
  await withWorkers(federation, async () => {
    await federation.createContext(base, undefined).enqueueTask(flaky, {});
    await server.waitForRequests(1);
  });
  const [request] = server.requests;
  const payload = JSON.parse(request.body) as WebhookPayload;
  assertEquals([payload.task.reason, payload.task.attemptsLeft], ["exhausted", 0]);
  const traceparent = request.headers.get("traceparent") ?? "";
  const process = exporter.getFinishedSpans().find((span) =>
    span.name === "fedwork.queue.process" && span.attributes["fedwork.task.name"] === "flaky"
  );
  assert(process != null, "the task's span was recorded");
  // The request's parent is the span the task ran in.
  assertEquals(traceparent.split("-")[1], process.spanContext().traceId);
  assertEquals(traceparent.split("-")[2], process.spanContext().spanId);
});

test("a webhook with deliveries: true gets the failed event of a delivery that failed for good", async () => {
  const received: WebhookPayload[] = [];
  await using receiver = await startTestServer(async (request) => {
    received.push(JSON.parse(await request.text()));
    return new Response(null, { status: 204 });
  });
  await using inbox = await startTestServer(() => new Response("gone", { status: 410 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const keyPair = await generateCryptoKeyPair();
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: (await ctx.getActorKeyPairs(identifier))[0].cryptographicKey,
    })).setKeyPairsDispatcher(() => [keyPair]);
  const job = federation.defineTask("job", {
    schema: z.object({}),
    handler: () => {
      throw new Error("always");
    },
  });
  const operator = await federation.addWebhook({
    url: new URL("/operator", receiver.url),
    events: ["failed"],
    secret,
    deliveries: true,
    tasks: ["other"],
  });
  assertEquals(operator.deliveries, true);
  await federation.addWebhook({ url: new URL("/tasks", receiver.url), events: ["failed"], secret });
  const to = new URL("/inbox", inbox.url);
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    await ctx.sendActivity(
      { identifier: "alice" },
      { id: new URL("https://remote.example/users/bob"), inboxId: to },
      new Create({
        id: new URL("https://example.com/activities/1"),
        actor: ctx.getActorUri("alice"),
        object: new Note({ content: "Hello" }),
      }),
    );
    await waitUntil(
      async () =>
        received.length >= 1 &&
        (await federation.countFailedTasks({ kind: "delivery" })).size === 1,
      { what: "the failed delivery's record and webhook request" },
    );
    // Enqueued after the delivery's events: had one gone to the webhook
    // without deliveries, it would have arrived before the task's.
    await ctx.enqueueTask(job, {});
    await waitUntil(() => received.some((payload) => payload.task.name === "job"), {
      what: "the task's failed event",
    });
  });
  const toOperator = receiver.requests.filter((r) => new URL(r.url).pathname === "/operator");
  assertEquals(toOperator.length, 1, "the task failure is filtered out by tasks");
  const payload = JSON.parse(toOperator[0].body) as WebhookPayload;
  const [record] = (await federation.listFailedTasks({ kind: "delivery" })).records;
  assertEquals(payload.type, "failed");
  assertEquals(
    [payload.task.kind, payload.task.name, payload.task.id, payload.task.reason],
    ["delivery", "fedwork:delivery", record.id, "permanent"],
  );
  assertEquals(payload.task.delivery, {
    inbox: to.href,
    sharedInbox: false,
    activityId: "https://example.com/activities/1",
    activityType: "Create",
    statusCode: 410,
  });
  const toTasks = receiver.requests.filter((r) => new URL(r.url).pathname === "/tasks");
  assertEquals(
    toTasks.map((r) => (JSON.parse(r.body) as WebhookPayload).task.name),
    ["job"],
    "a webhook without deliveries gets no delivery events",
  );
});
