import {
  createFederation,
  type Federation,
  type FederationOptions,
  InProcessMessageQueue,
  type KvStore,
  millisecondsToDuration,
  verifyWebhookRequest,
  type Webhook,
  type WebhookPayload,
} from "@fedwork/core";
import type { FailedDeliveryConformanceOptions } from "./failed-delivery-suite.ts";
import { startTestServer } from "./http-server.ts";
import { passThrough, withStore } from "./store-suite.ts";
import { assert, assertEquals, test } from "./test-runner.ts";
import { waitUntil } from "./wait.ts";

/**
 * Options for {@link testWebhooks}: the store's name and how to open it.
 * `open()` is called more than once per test with the same namespace, and
 * each call must reach the same data (for an in-memory store, return the
 * same instance for a namespace).
 * @since 0.3.0
 */
export type WebhookConformanceOptions = FailedDeliveryConformanceOptions;

const base = new URL("https://app.example/");
const secret = "webhook-suite-secret-0123456789";
const apiKey = "api-key-the-receiver-requires-42";

function federationOn(
  kv: KvStore,
  queue: InProcessMessageQueue,
  options: Partial<FederationOptions<void>> = {},
): Federation<void> {
  return createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    // One attempt for the suite's tasks; webhooks retry by their own policy.
    taskRetryPolicy: ({ attempts }) => attempts >= 1 ? null : millisecondsToDuration(1),
    ...options,
  });
}

/** Runs `body` while a worker of `federation` listens, then stops it. */
async function withWorker(federation: Federation<void>, body: () => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal, presence: false });
  try {
    await body();
  } finally {
    controller.abort();
    await worker;
  }
}

/**
 * Registers the tests of webhooks kept in a key–value store, against real
 * loopback receivers: a webhook added through one connection to the store
 * is listed (without its secret or header values) and sent through
 * another, signed, with its extra headers and only for its tasks, and its
 * `lastSuccessAt` is kept; a failing receiver disables a webhook but never
 * a static one, a probe enables it again once the receiver answers, and
 * the store keeps `lastFailureAt`, `lastSuccessAt` and the counts.
 * @param options The store's name and how to open it.
 * @since 0.3.0
 */
export function testWebhooks(options: WebhookConformanceOptions): void {
  test(`${options.name}: a webhook added in one process is sent, signed and with its headers, by another`, () =>
    withStore(options, async (open) => {
      const received: WebhookPayload[] = [];
      const refused: string[] = [];
      await using server = await startTestServer(async (request) => {
        if (request.headers.get("x-api-key") !== apiKey) {
          refused.push("no API key");
          return new Response(null, { status: 403 });
        }
        try {
          received.push(await verifyWebhookRequest(request, { secret, toleranceSeconds: 60 }));
          return new Response(null, { status: 204 });
        } catch (error) {
          refused.push(String(error));
          return new Response(null, { status: 401 });
        }
      });
      await using adminQueue = new InProcessMessageQueue();
      const admin = federationOn(await open(), adminQueue);
      const added = await admin.addWebhook({
        url: new URL("/hooks", server.url),
        events: ["enqueued", "completed"],
        tasks: ["job"],
        secret,
        headers: { "X-API-Key": apiKey },
        retryPolicy: { maxAttempts: 3, initialDelay: { milliseconds: 10 } },
        deliveries: true,
      });

      await using queue = new InProcessMessageQueue();
      const worker = federationOn(await open(), queue);
      const listed = await worker.listWebhooks();
      assertEquals(listed, [added]);
      assertEquals(listed[0].headerNames, ["X-API-Key"]);
      assertEquals([listed[0].retryPolicy?.maxAttempts, listed[0].deliveries], [3, true]);
      const shown = JSON.stringify(listed);
      assert(
        !shown.includes(secret) && !shown.includes(apiKey),
        "no secret or header value listed",
      );
      const job = worker.defineTask("job", {
        schema: passThrough<{ n: number }>(),
        handler: () => {},
      });
      const other = worker.defineTask("other", {
        schema: passThrough<{ n: number }>(),
        handler: () => {},
      });
      let jobId = "";
      await withWorker(worker, async () => {
        const ctx = worker.createContext(base, undefined);
        // Enqueued first: had it been sent, it would have arrived first.
        await ctx.enqueueTask(other, { n: 0 });
        const result = await ctx.enqueueTask(job, { n: 1 });
        jobId = result.status === "enqueued" ? result.messageId : "";
        await waitUntil(() => received.length >= 2, {
          what: () => `two webhook requests; got ${received.length}, refused ${refused.length}`,
        });
        await waitUntil(async () => (await worker.listWebhooks())[0]?.lastSuccessAt != null, {
          what: "lastSuccessAt to be set",
        });
      });
      assertEquals(refused, []);
      assertEquals(received.map((payload) => payload.type).sort(), ["completed", "enqueued"]);
      for (const payload of received) {
        assertEquals([payload.webhookId, payload.task.id, payload.task.name], [
          added.id,
          jobId,
          "job",
        ]);
      }
      assertEquals(server.requests.length, 2);
      for (const request of server.requests) {
        assert(![...request.headers.values()].some((value) => value.includes(secret)));
      }

      const [after] = await federationOn(await open(), adminQueue).listWebhooks();
      assert(after.lastSuccessAt instanceof Date, "lastSuccessAt is kept in the store");
      assertEquals([after.enabled, after.consecutiveFailures, after.lastFailureAt], [
        true,
        0,
        undefined,
      ]);
    }));

  test(`${options.name}: a failing receiver disables a webhook but not a static one, and a probe enables it again`, () =>
    withStore(options, async (open) => {
      let answer = 500;
      await using server = await startTestServer(() => new Response(null, { status: answer }));
      await using queue = new InProcessMessageQueue();
      const disabled: Webhook[] = [];
      const federation = federationOn(await open(), queue, {
        webhooks: {
          disableAfterFailures: 1,
          retryPolicy: () => null,
          probeInitialDelay: { milliseconds: 10 },
          probeMaxDelay: { milliseconds: 40 },
          onDisabled: (webhook) => void disabled.push(webhook),
        },
      });
      const job = federation.defineTask("job", {
        schema: passThrough<{ n: number }>(),
        handler: () => {},
      });
      const fixed = await federation.addWebhook({
        url: new URL("/static", server.url),
        events: ["completed"],
        secret,
        static: true,
      });
      const probed = await federation.addWebhook({
        url: new URL("/probed", server.url),
        events: ["completed"],
        secret,
      });
      const requestsTo = (path: string) =>
        server.requests.filter((request) => new URL(request.url).pathname === path);
      await withWorker(federation, async () => {
        const ctx = federation.createContext(base, undefined);
        await ctx.enqueueTask(job, { n: 1 });
        await ctx.enqueueTask(job, { n: 2 });
        await waitUntil(
          () => requestsTo("/static").length >= 2 && requestsTo("/probed").length >= 3,
          {
            what: () =>
              `both events at the static webhook and two probes of the other; got ${
                requestsTo("/static").length
              } and ${requestsTo("/probed").length}`,
          },
        );
        // Another connection sees the state the first one wrote.
        const seen = new Map(
          (await federationOn(await open(), queue).listWebhooks()).map((hook) => [hook.id, hook]),
        );
        assertEquals(
          [seen.get(fixed.id)?.enabled, seen.get(fixed.id)?.consecutiveFailures],
          [true, 2],
        );
        assertEquals(seen.get(fixed.id)?.lastError, "HTTP 500");
        assertEquals(seen.get(probed.id)?.enabled, false);
        assert(seen.get(probed.id)?.disabledAt instanceof Date, "disabledAt is kept");
        assert(seen.get(probed.id)?.lastFailureAt instanceof Date, "lastFailureAt is kept");
        answer = 204;
        await waitUntil(
          async () =>
            (await federation.listWebhooks()).find((hook) => hook.id === probed.id)?.enabled ===
              true,
          { what: "a probe to enable the webhook" },
        );
      });
      assertEquals(disabled.map((webhook) => webhook.id), [probed.id]);
      // Every probe re-sent the event that disabled it; the second event
      // found the webhook disabled and was not sent.
      assertEquals(new Set(requestsTo("/probed").map((r) => JSON.parse(r.body).id)).size, 1);
      const kept = new Map(
        (await federationOn(await open(), queue).listWebhooks()).map((hook) => [hook.id, hook]),
      );
      const again = kept.get(probed.id)!;
      assertEquals([again.enabled, again.consecutiveFailures, again.nextProbeAt], [
        true,
        0,
        undefined,
      ]);
      assert(again.lastSuccessAt instanceof Date && again.lastFailureAt instanceof Date);
      assert(again.lastSuccessAt >= again.lastFailureAt, "the success came after the failures");
      const still = kept.get(fixed.id)!;
      assertEquals([still.static, still.enabled, still.lastSuccessAt], [true, true, undefined]);
      assert(still.lastFailureAt instanceof Date, "the static webhook's lastFailureAt is kept");
    }));
}
