// With and without queues, the same dispatcher decides every message: the
// same lifecycle events and metrics, and "no listener" is its own outcome.
import { assert, assertEquals, test, waitUntil } from "@fedify/fixture";
import { Follow, Like } from "@fedify/vocab";
import { withLogs } from "@fedify/fixture";
import { PermanentError } from "../processing/errors.ts";
import type { MessageEvent } from "../processing/events.ts";
import { MESSAGE_METRICS } from "../processing/metrics.ts";
import { count, histogramCount, testMeters } from "../processing/testdata/test-meters.ts";
import { InProcessMessageQueue } from "../queue/in-process-message-queue.ts";
import { type InboxServer, post, startServer } from "./testdata/inbox-test-support.ts";
import { testKeyPair } from "./testdata/test-support.ts";

const { privateKey } = await testKeyPair();

/** What one run of the scenario saw, in an order that does not depend on timing. */
interface Seen {
  readonly statuses: number[];
  readonly sendErrors: string[];
  readonly events: string[];
  readonly metrics: Record<string, number>;
}

/** Records a federation's lifecycle events as "kind type (reason)". */
function recordEvents(server: InboxServer): string[] {
  const seen: string[] = [];
  for (const type of ["completed", "unhandled", "retrying", "failed", "dropped"] as const) {
    server.federation.on(type, (event: MessageEvent) => {
      const reason = "reason" in event && event.type !== "unhandled" ? ` (${event.reason})` : "";
      seen.push(`${event.kind} ${event.type}${reason}`);
    });
  }
  return seen;
}

/**
 * Receives a handled Follow, a Like no listener handles and a Create whose
 * listener gives up, and sends one delivery that arrives and one that the
 * recipient refuses for good, with or without queues.
 */
async function runScenario(queued: boolean): Promise<Seen> {
  const meters = testMeters();
  const remote = await startServer({
    meterProvider: meters.meterProvider,
    ...(queued ? { queue: new InProcessMessageQueue() } : {}),
  });
  const local = await startServer({
    failures: [new PermanentError("not for us")],
    meterProvider: meters.meterProvider,
    ...(queued ? { queue: new InProcessMessageQueue() } : {}),
  });
  const remoteEvents = recordEvents(remote);
  const localEvents = recordEvents(local);
  const controller = new AbortController();
  const workers = queued
    ? [remote, local].map((s) => s.federation.startQueue(undefined, { signal: controller.signal }))
    : [];
  try {
    const aliceKey = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const activity = (type: string, path: string) =>
      JSON.stringify({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: remote.url(path).href,
        type,
        actor: remote.url("/users/alice").href,
        object: type === "Create"
          ? { id: remote.url(`${path}/note`).href, type: "Note", content: "Hi" }
          : local.url("/users/bob").href,
      });
    const inbox = local.url("/users/bob/inbox");
    const statuses: number[] = [];
    const sendErrors: string[] = [];
    await withLogs(async () => {
      for (
        const [type, path] of [["Follow", "/follows/1"], ["Like", "/likes/1"], [
          "Create",
          "/creates/1",
        ]]
      ) {
        statuses.push((await post(inbox, activity(type, path), aliceKey)).status);
      }
      const ctx = remote.federation.createContext(remote.server.url, undefined);
      for (const who of ["bob", "nobody"]) {
        try {
          await ctx.sendActivity(
            { identifier: "alice" },
            { id: local.url(`/users/${who}`), inboxId: local.url(`/users/${who}/inbox`) },
            new Follow({
              id: remote.url(`/follows/to-${who}`),
              actor: remote.url("/users/alice"),
              object: local.url(`/users/${who}`),
            }),
          );
        } catch (error) {
          sendErrors.push((error as Error).constructor.name);
        }
      }
      await waitUntil(
        () => localEvents.length >= 4 && remoteEvents.length >= 2,
        { what: "every message to be processed" },
      );
    });
    const collected = await meters.collect();
    const metrics: Record<string, number> = {};
    for (const kind of ["inbox", "outbox"]) {
      const attributes = { "fedwork.message.type": kind };
      for (const name of ["completed", "unhandled", "retried", "failed", "dropped"] as const) {
        metrics[`${kind} ${name}`] = count(collected, MESSAGE_METRICS[name], attributes);
      }
      metrics[`${kind} duration`] = histogramCount(
        collected,
        MESSAGE_METRICS.duration,
        attributes,
      );
    }
    return {
      statuses,
      sendErrors,
      events: [...remoteEvents, ...localEvents].sort(),
      metrics,
    };
  } finally {
    controller.abort();
    await Promise.all(workers);
    await remote.server.close();
    await local.server.close();
    await meters.shutdown();
  }
}

test("received and sent activities get the same events and metrics with and without queues", async () => {
  const withoutQueue = await runScenario(false);
  const withQueue = await runScenario(true);
  const expected = [
    "inbox completed",
    "inbox completed",
    "inbox failed (permanent)",
    "inbox unhandled",
    "outbox completed",
    "outbox failed (permanent)",
  ];
  assertEquals(withoutQueue.events, expected);
  assertEquals(withQueue.events, expected);
  const metrics = {
    "inbox completed": 2,
    "inbox unhandled": 1,
    "inbox retried": 0,
    "inbox failed": 1,
    "inbox dropped": 0,
    "inbox duration": 4,
    "outbox completed": 1,
    "outbox unhandled": 0,
    "outbox retried": 0,
    "outbox failed": 1,
    "outbox dropped": 0,
    "outbox duration": 2,
  };
  assertEquals(withoutQueue.metrics, metrics);
  assertEquals(withQueue.metrics, metrics);
  assertEquals(withoutQueue.statuses, [202, 202, 202]);
  assertEquals(withQueue.statuses, [202, 202, 202]);
  // Without a queue the caller hears of the refused delivery; with one, a
  // worker does, later.
  assertEquals(withoutQueue.sendErrors, ["AggregateError"]);
  assertEquals(withQueue.sendErrors, []);
});

test("without an inbox queue an activity no listener handles is unhandled, not completed", async () => {
  const remote = await startServer();
  const local = await startServer();
  const events = recordEvents(local);
  const unhandled: MessageEvent[] = [];
  local.federation.on("unhandled", (event) => void unhandled.push(event));
  try {
    const like = new Like({
      id: remote.url("/likes/unhandled"),
      actor: remote.url("/users/alice"),
      object: local.url("/users/bob"),
    });
    const response = await withLogs(async () =>
      await post(
        local.url("/users/bob/inbox"),
        JSON.stringify(await like.toJsonLd()),
        { keyId: remote.url("/users/alice#main-key"), privateKey },
      )
    );
    assertEquals(response.status, 202);
    assertEquals(events, ["inbox unhandled"]);
    const [event] = unhandled;
    assert(event.type === "unhandled");
    assertEquals(event.reason, `no inbox listener handles Like activities (${like.id!.href})`);
    assertEquals(local.received, []);
  } finally {
    await remote.server.close();
    await local.server.close();
  }
});

test("without an inbox queue a failed listener fires retrying, answers 500 and keeps no retry", async () => {
  const remote = await startServer();
  const local = await startServer({ failures: [new Error("database down")] });
  const events = recordEvents(local);
  const retrying: MessageEvent[] = [];
  local.federation.on("retrying", (event) => void retrying.push(event));
  try {
    const create = JSON.stringify({
      "@context": "https://www.w3.org/ns/activitystreams",
      id: remote.url("/creates/failing").href,
      type: "Create",
      actor: remote.url("/users/alice").href,
      object: { id: remote.url("/creates/failing/note").href, type: "Note", content: "Hi" },
    });
    const key = { keyId: remote.url("/users/alice#main-key"), privateKey };
    const inbox = local.url("/users/bob/inbox");
    const statuses = await withLogs(async () => [
      (await post(inbox, create, key)).status,
      (await post(inbox, create, key)).status,
    ]);
    assertEquals(statuses, [500, 202]);
    assertEquals(events, ["inbox retrying (error)", "inbox completed"]);
    const [event] = retrying;
    // The sender retries, whenever it does: no delay of ours.
    assert(event.type === "retrying" && event.delay === undefined && event.reason === "error");
  } finally {
    await remote.server.close();
    await local.server.close();
  }
});
