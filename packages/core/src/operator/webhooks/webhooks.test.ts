// Signed webhooks end to end: a federation with a real in-process queue
// POSTs task events to real loopback receivers.
import {
  assert,
  assertEquals,
  assertRejects,
  deferred,
  startTestServer,
  test,
  waitUntil,
  within,
} from "@fedify/fixture";
import { z } from "zod";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { PermanentError } from "../../processing/errors.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import type { Webhook, WebhookPayload } from "./types.ts";
import { verifyWebhookRequest } from "./verify.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import { withWorkers } from "../../federation/testdata/test-support.ts";

const base = new URL("https://example.com/");
const secret = "webhook-test-secret-0123456789";

function federationOn(
  queue: InProcessMessageQueue,
  options: Partial<FederationOptions<void>> = {},
): Federation<void> {
  return createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    // One attempt for the app's tasks; webhooks retry by their own policy.
    taskRetryPolicy: ({ attempts }) => attempts >= 1 ? null : millisecondsToDuration(1),
    ...options,
  });
}

test("a loopback receiver verifies the signed completed and failed events of tasks", async () => {
  const received: WebhookPayload[] = [];
  const rejected: unknown[] = [];
  await using server = await startTestServer(async (request) => {
    try {
      received.push(await verifyWebhookRequest(request, { secret, toleranceSeconds: 60 }));
      return new Response(null, { status: 204 });
    } catch (error) {
      rejected.push(error);
      return new Response(null, { status: 401 });
    }
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const resize = federation.defineTask("resize", {
    schema: z.object({ id: z.number() }),
    handler: () => {},
  });
  const explode = federation.defineTask("explode", {
    schema: z.object({}),
    handler: () => {
      throw new PermanentError("the image is corrupt");
    },
  });
  const webhook = await federation.addWebhook({
    url: new URL("/hooks", server.url),
    events: ["completed", "failed"],
    secret,
  });
  assertEquals(
    { url: webhook.url, events: webhook.events, enabled: webhook.enabled },
    { url: new URL("/hooks", server.url).href, events: ["completed", "failed"], enabled: true },
  );
  assert(!JSON.stringify(webhook).includes(secret), "the secret is not returned");
  assertEquals((await federation.listWebhooks()).map((hook) => hook.id), [webhook.id]);
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    const done = await ctx.enqueueTask(resize, { id: 1 });
    const failed = await ctx.enqueueTask(explode, {});
    await waitUntil(() => received.length >= 2, { what: "two webhook requests" });
    assertEquals(rejected, []);
    const byType = Object.fromEntries(received.map((payload) => [payload.type, payload]));
    assertEquals(byType.completed.task.name, "resize");
    assertEquals(byType.completed.task.id, done.status === "enqueued" ? done.messageId : "");
    assertEquals(byType.completed.webhookId, webhook.id);
    assertEquals(byType.failed.task.name, "explode");
    assertEquals(byType.failed.task.id, failed.status === "enqueued" ? failed.messageId : "");
    assertEquals(byType.failed.task.reason, "permanent");
    assertEquals(byType.failed.task.error, {
      name: "PermanentError",
      message: "the image is corrupt",
    });
  });
  const [first] = server.requests;
  assertEquals(first.method, "POST");
  assertEquals(first.headers.get("content-type"), "application/json");
  assertEquals(first.headers.get("fedwork-webhook-id"), JSON.parse(first.body).id);
  assertEquals(first.headers.get("fedwork-webhook-event"), JSON.parse(first.body).type);
  assert(/^v2=[0-9a-f]{64}$/.test(first.headers.get("fedwork-webhook-signature") ?? ""));
  for (const request of server.requests) {
    assert(![...request.headers.values()].some((value) => value.includes(secret)));
  }
  // Webhook requests are tasks too, but never reported to webhooks.
  assertEquals(server.requests.length, 2);
});

test("one failure reads the same in its failed record, its status record and its webhook", async () => {
  const received: WebhookPayload[] = [];
  await using server = await startTestServer(async (request) => {
    received.push(await verifyWebhookRequest(request, { secret, toleranceSeconds: 60 }));
    return new Response(null, { status: 204 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, { failedTaskRetention: { days: 1 } });
  const long = "the image is corrupt: " + "x".repeat(2_000);
  const explode = federation.defineTask("explode", {
    schema: z.object({}),
    handler: () => {
      throw new PermanentError(long);
    },
  });
  await federation.addWebhook({ url: new URL("/hooks", server.url), events: ["failed"], secret });
  await withWorkers(federation, async () => {
    const enqueued = await federation.createContext(base, undefined).enqueueTask(explode, {});
    const id = enqueued.status === "enqueued" ? enqueued.messageId : "";
    await waitUntil(() => received.length >= 1, { what: "the failed event" });
    const status = await federation.getTaskStatus(id);
    const { records } = await federation.listFailedTasks();
    const expected = { name: "PermanentError", message: `${long.slice(0, 999)}…` };
    assertEquals(received[0].task.error, expected);
    assertEquals(status?.error, expected);
    const { stack, ...recorded } = records[0].error!;
    assertEquals(recorded, expected);
    // Only the record, which stays in the operator's own store, keeps it.
    assert(stack?.includes("PermanentError"));
  });
});

test("progress reports reach the webhooks that ask for them, signed like the rest", async () => {
  const received: WebhookPayload[] = [];
  await using server = await startTestServer(async (request) => {
    received.push(await verifyWebhookRequest(request, { secret }));
    return new Response(null, { status: 204 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const transcode = federation.defineTask("transcode", {
    schema: z.object({}),
    async handler(ctx) {
      await ctx.task.reportProgress(50);
      // Within a second of the first this one is skipped (throttled; not
      // asserted, as a slow machine may take longer); 100 % always goes.
      await ctx.task.reportProgress(70);
      await ctx.task.reportProgress({ percent: 100, data: { step: "done" } });
    },
  });
  await federation.addWebhook({ url: server.url, events: ["progress", "completed"], secret });
  await withWorkers(federation, async () => {
    await federation.createContext(base, undefined).enqueueTask(transcode, {});
    await waitUntil(() => received.length >= 3, { what: "three webhook requests" });
  });
  const progress = received.filter((payload) => payload.type === "progress")
    .map((payload) => payload.task.progress)
    .filter((reported) => reported?.percent !== 70)
    .sort((a, b) => (a?.percent ?? 0) - (b?.percent ?? 0));
  assertEquals(progress, [{ percent: 50 }, { percent: 100, data: { step: "done" } }]);
  assertEquals(received.filter((payload) => payload.type === "completed").length, 1);
  assertEquals(new Set(received.map((payload) => payload.task.name)), new Set(["transcode"]));
});

test("a cancelled task reaches the webhooks that ask for cancelled events", async () => {
  const received: WebhookPayload[] = [];
  await using server = await startTestServer(async (request) => {
    received.push(await verifyWebhookRequest(request, { secret }));
    return new Response(null, { status: 204 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  let ran = false;
  const importFollowers = federation.defineTask("import-followers", {
    schema: z.object({}),
    handler: () => void (ran = true),
  });
  await federation.addWebhook({ url: server.url, events: ["cancelled"], secret });
  const result = await federation.createContext(base, undefined).enqueueTask(importFollowers, {});
  assert(result.status === "enqueued");
  assertEquals(
    await federation.cancelTask(result.messageId, { reason: "the user left" }),
    { status: "cancelled", id: result.messageId, state: "queued" },
  );
  await withWorkers(federation, async () => {
    await waitUntil(() => received.length >= 1, { what: "the cancelled event's request" });
  });
  assertEquals(ran, false);
  assertEquals(received.length, 1);
  assertEquals(received[0].type, "cancelled");
  assertEquals(received[0].task.id, result.messageId);
  assertEquals(received[0].task.reason, "the user left");
  assertEquals(received[0].task.started, false);
});

test("a webhook receives only the events and tasks it names", async () => {
  await using server = await startTestServer(() => new Response(null, { status: 200 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const schema = z.object({});
  const watched = federation.defineTask("watched", { schema, handler: () => {} });
  const other = federation.defineTask("other", { schema, handler: () => {} });
  const last = deferred();
  const marker = federation.defineTask("marker", { schema, handler: () => last.resolve() });
  await federation.addWebhook({
    url: server.url,
    events: ["completed"],
    tasks: ["watched", "marker"],
    secret,
  });
  await federation.addWebhook({ url: server.url, events: ["dropped"], secret });
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    await ctx.enqueueTask(other, {});
    await ctx.enqueueTask(watched, {});
    await ctx.enqueueTask(marker, {});
    await within(last.promise, "the marker task");
    await server.waitForRequests(2);
  });
  const names = server.requests.map((request) => JSON.parse(request.body).task.name).sort();
  assertEquals(names, ["marker", "watched"]);
});

test("a failing receiver is disabled after the configured number of failures in a row", async () => {
  let answer = 200;
  await using server = await startTestServer(() => new Response("down", { status: answer }));
  await using queue = new InProcessMessageQueue();
  const disabled = deferred<Webhook>();
  const federation = federationOn(queue, {
    webhooks: {
      disableAfterFailures: 3,
      onDisabled: (webhook) => disabled.resolve(webhook),
      retryPolicy: ({ attempts }) => attempts >= 10 ? null : millisecondsToDuration(5),
    },
  });
  const job = federation.defineTask("job", { schema: z.object({}), handler: () => {} });
  const webhook = await federation.addWebhook({ url: server.url, events: ["completed"], secret });
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    // A success first; then failures, counted across events and retries.
    await ctx.enqueueTask(job, {});
    await server.waitForRequests(1);
    await waitUntil(async () => (await federation.listFailedTasks()).records.length === 0, {
      what: "the first request to be done",
    });
    answer = 500;
    await ctx.enqueueTask(job, {});
    const off = await within(disabled.promise, "the webhook to be disabled");
    assertEquals(off.id, webhook.id);
    assertEquals(off.enabled, false);
    assertEquals(off.consecutiveFailures, 3);
    assertEquals(off.lastError, "HTTP 500");
    assertEquals(server.requests.length, 4);
    // The request that disabled it failed for good, into the failed-task store.
    await waitUntil(async () => (await federation.listFailedTasks()).records.length === 1, {
      what: "the webhook task to fail",
    });
    const [record] = (await federation.listFailedTasks()).records;
    assertEquals(record.taskName, "fedwork:webhook");
    assert(!JSON.stringify(record).includes(secret), "no secret in the failed-task store");
    // Nothing more is sent while it is disabled.
    const last = deferred();
    const marker = federation.defineTask("marker", {
      schema: z.object({}),
      handler: () => last.resolve(),
    });
    await ctx.enqueueTask(marker, {});
    await within(last.promise, "the marker task");
    const [listed] = await federation.listWebhooks();
    assertEquals(listed.enabled, false);
    assert(listed.disabledAt instanceof Date);
    assertEquals(server.requests.length, 4);
    // Enabled again, it receives events and a success keeps the count at 0.
    answer = 204;
    const enabled = await federation.enableWebhook(webhook.id);
    assertEquals([enabled?.enabled, enabled?.consecutiveFailures], [true, 0]);
    await ctx.enqueueTask(job, {});
    await server.waitForRequests(5);
  });
});

test("addWebhook validates its arguments and removeWebhook removes", async () => {
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue);
  const url = "https://hooks.example/fedwork";
  await assertRejects(
    () => federation.addWebhook({ url, events: ["completed"], secret: "too-short" }),
    TypeError,
    "at least 16 characters",
  );
  await assertRejects(
    () => federation.addWebhook({ url: "ftp://hooks.example/", events: ["completed"], secret }),
    TypeError,
    "http(s) URL",
  );
  await assertRejects(
    // @ts-expect-error: not an event
    () => federation.addWebhook({ url, events: ["finished"], secret }),
    TypeError,
    "Unknown webhook event",
  );
  await assertRejects(
    () => federation.addWebhook({ url, events: [], secret }),
    TypeError,
    "non-empty array",
  );
  const webhook = await federation.addWebhook({ url, events: ["failed"], secret });
  assertEquals(await federation.removeWebhook(webhook.id), true);
  assertEquals(await federation.removeWebhook(webhook.id), false);
  assertEquals(await federation.listWebhooks(), []);
});

test("webhook requests to private addresses are refused unless allowPrivateAddress is set", async () => {
  await using server = await startTestServer(() => new Response(null, { status: 204 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, { allowPrivateAddress: false });
  const job = federation.defineTask("job", { schema: z.object({}), handler: () => {} });
  await federation.addWebhook({ url: server.url, events: ["completed"], secret });
  await withWorkers(federation, async () => {
    await federation.createContext(base, undefined).enqueueTask(job, {});
    await waitUntil(async () => (await federation.listFailedTasks()).records.length === 1, {
      what: "the webhook task to fail",
    });
  });
  const [record] = (await federation.listFailedTasks()).records;
  assertEquals(record.reason, "permanent");
  assert(record.error?.message.includes("allowPrivateAddress"), record.error?.message);
  assertEquals(server.requests.length, 0);
});

test("a webhook request cut short by its worker stopping counts no failure against the webhook", async () => {
  const arrived = deferred();
  const answer = deferred();
  await using server = await startTestServer(async () => {
    arrived.resolve();
    await answer.promise;
    return new Response(null, { status: 204 });
  });
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, { webhooks: { disableAfterFailures: 1 } });
  const job = federation.defineTask("job", { schema: z.object({}), handler: () => {} });
  await federation.addWebhook({
    url: new URL("/hooks", server.url),
    events: ["completed"],
    secret,
  });
  await withWorkers(federation, async () => {
    await federation.createContext(base, undefined).enqueueTask(job, {});
    await within(arrived.promise, "the webhook request");
  });
  answer.resolve();
  const [webhook] = await federation.listWebhooks();
  assertEquals([webhook.enabled, webhook.consecutiveFailures, webhook.lastFailureAt], [
    true,
    0,
    undefined,
  ]);
});
