// Per-host concurrency and rate of deliveries, in one process, against
// real HTTP servers on loopback addresses.  The same limits across two
// worker processes on SQLite, PostgreSQL and Redis are in @fedwork/testing's
// testHostLimits().
import { assert, assertEquals, test, waitUntil } from "@fedify/fixture";
import { Create, Note, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { ParallelMessageQueue } from "../../queue/parallel-message-queue.ts";
import type { MessageQueue } from "../../queue/message-queue.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import type { MessageEvent } from "../../processing/events.ts";
import { millisecondsToDuration } from "../../time/duration.ts";
import { testKeyPair, withWorkers } from "../../federation/testdata/test-support.ts";
import { MESSAGE_METRICS } from "../../processing/metrics.ts";
import {
  count as countMetric,
  histogramCount,
  testMeters,
} from "../../processing/testdata/test-meters.ts";
import {
  type HostAnswer,
  type HostRequest,
  type LoopbackHost,
  startLoopbackHost,
} from "../host-policy/testdata/loopback-hosts.ts";

const base = new URL("https://example.com/");
const RUN_TIMEOUT_MS = 60_000;

function harness(queue: MessageQueue | undefined, options: Partial<FederationOptions<void>>) {
  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxRetryPolicy: ({ attempts }) => attempts >= 20 ? null : millisecondsToDuration(10),
    ...options,
  });
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(async () => [await testKeyPair()]);
  const events: MessageEvent[] = [];
  for (const type of ["completed", "retrying", "failed", "dropped"] as const) {
    federation.on(type, (event) => void events.push(event));
  }
  return { federation, events };
}

/** Sends one activity to `count` followers' inboxes on each host. */
function sendToFollowers(
  federation: Federation<void>,
  hosts: readonly LoopbackHost[],
  count: number,
): Promise<void> {
  const recipients = hosts.flatMap((host) =>
    Array.from({ length: count }, (_, i) => {
      const id = new URL(`/users/u${i}`, host.url);
      return { id, inboxId: new URL(`${id.href}/inbox`) };
    })
  );
  return federation.createContext(base, undefined).sendActivity(
    { identifier: "alice" },
    recipients,
    new Create({
      id: new URL("https://example.com/activities/1"),
      actor: new URL("https://example.com/users/alice"),
      object: new Note({ content: "Hello" }),
    }),
  );
}

function posts(host: LoopbackHost): HostRequest[] {
  return host.requests.filter((request) => request.method === "POST");
}

function outbox(events: readonly MessageEvent[], type: MessageEvent["type"]) {
  return events.filter((event) => event.kind === "outbox" && event.type === type);
}

const slow = (delayMs: number) => (): HostAnswer => ({ status: 202, delayMs });

test("hostPolicy.concurrency: 4 keeps a fan-out to 50 followers on one host to 4 in flight", async () => {
  await using host = await startLoopbackHost("127.0.0.1", slow(100));
  await using other = await startLoopbackHost("127.0.0.2", slow(100));
  // Sixteen workers: the host's limit, not the workers, is what binds.
  const queue = new ParallelMessageQueue(new InProcessMessageQueue(), 16);
  const meters = testMeters();
  const { federation, events } = harness(queue, {
    hostPolicy: { concurrency: 4 },
    meterProvider: meters.meterProvider,
  });
  await withWorkers(federation, async () => {
    await sendToFollowers(federation, [host, other], 50);
    await waitUntil(() => outbox(events, "completed").length === 100, {
      what: () => `100 deliveries; ${outbox(events, "completed").length} so far`,
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  for (const server of [host, other]) {
    assertEquals(posts(server).length, 50);
    assertEquals(server.maxInFlight, 4, `at most 4 in flight, and 4 reached, at ${server.url}`);
  }
  // The waits spent no attempt: every delivery completed at its first.
  assert(outbox(events, "completed").every((event) => event.attempt === 0));
  const waits = outbox(events, "retrying");
  assert(waits.length > 0);
  for (const event of waits) {
    assert(event.type === "retrying" && event.reason === "wait", JSON.stringify(event));
    assertEquals(event.waitFor, "concurrency");
  }
  // Each wait is counted and its delay recorded, by reason.
  const collected = await meters.collect();
  const waited = { "fedwork.message.type": "outbox", "fedwork.wait.cause": "concurrency" };
  assertEquals(countMetric(collected, MESSAGE_METRICS.waited, waited), waits.length);
  assertEquals(histogramCount(collected, MESSAGE_METRICS.waitDelay, waited), waits.length);
  await meters.shutdown();
  await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
});

test("hostPolicy.concurrency as a function limits only the hosts it names", async () => {
  await using small = await startLoopbackHost("127.0.0.1", slow(100));
  await using big = await startLoopbackHost("127.0.0.2", slow(100));
  const queue = new ParallelMessageQueue(new InProcessMessageQueue(), 8);
  const seen = new Set<string>();
  const { federation, events } = harness(queue, {
    hostPolicy: {
      concurrency: (name) => {
        seen.add(name);
        return name === "127.0.0.1" ? 1 : undefined;
      },
    },
  });
  await withWorkers(federation, async () => {
    await sendToFollowers(federation, [small, big], 8);
    await waitUntil(() => outbox(events, "completed").length === 16, {
      what: () => `16 deliveries; ${outbox(events, "completed").length} so far`,
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  assertEquals(small.maxInFlight, 1);
  assert(big.maxInFlight > 1, `the unlimited host had ${big.maxInFlight} at most`);
  assertEquals([...seen].sort(), ["127.0.0.1", "127.0.0.2"]);
  await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
});

test("hostPolicy.rate spreads one host's deliveries to its limit per period", async () => {
  await using host = await startLoopbackHost("127.0.0.1");
  await using other = await startLoopbackHost("127.0.0.2");
  const queue = new ParallelMessageQueue(new InProcessMessageQueue(), 8);
  const { federation, events } = harness(queue, {
    // One start every 500 ms: the reserved starts of 8 span 3.5 s.
    hostPolicy: { rate: (name) => name === "127.0.0.1" ? { limit: 2, period: "PT1S" } : null },
  });
  // The hosts stamp requests with Date.now(), the clock the reservations use.
  const sentAt = Date.now();
  await withWorkers(federation, async () => {
    await sendToFollowers(federation, [host, other], 8);
    await waitUntil(() => outbox(events, "completed").length === 16, {
      what: () => `16 deliveries; ${outbox(events, "completed").length} so far`,
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  const times = posts(host).map((request) => request.at).sort((a, b) => a - b);
  assertEquals(times.length, 8);
  assertEquals(posts(other).length, 8);
  // None starts before its time: the k-th arrives no sooner than 500·k ms
  // after the send.  A loaded machine only makes starts late, which this
  // allows (a count per second does not: late ones bunch up).  Without the
  // rate they arrive all at once.
  times.forEach((at, k) => {
    assert(at - sentAt >= 500 * k - 50, `request ${k} ${at - sentAt} ms on`);
  });
  const waits = outbox(events, "retrying");
  assert(waits.length > 0);
  for (const event of waits) {
    assert(event.type === "retrying" && event.reason === "wait");
    assertEquals(event.waitFor, "rate");
  }
  assert(outbox(events, "completed").every((event) => event.attempt === 0));
  await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
});

test("a delivery that fails gives its host's slot back, so the others go on", async () => {
  // The first three POSTs fail; concurrency 1 would stall on a lost slot.
  await using host = await startLoopbackHost(
    "127.0.0.1",
    (_request, index) => index < 3 ? { status: 500 } : { status: 202 },
  );
  const queue = new ParallelMessageQueue(new InProcessMessageQueue(), 4);
  const { federation, events } = harness(queue, {
    hostPolicy: { concurrency: 1 },
    hostHealth: { failureThreshold: 100 },
  });
  await withWorkers(federation, async () => {
    await sendToFollowers(federation, [host], 5);
    await waitUntil(() => outbox(events, "completed").length === 5, {
      what: () => `5 deliveries; ${outbox(events, "completed").length} so far`,
      timeoutMs: RUN_TIMEOUT_MS,
    });
  });
  assertEquals(host.maxInFlight, 1);
  const failures = outbox(events, "retrying").filter((event) =>
    event.type === "retrying" && event.reason === "error"
  );
  // (A 500 may be knocked on twice, with each signature scheme.)
  assert(failures.length >= 1, "some attempts failed");
  await (queue as Partial<AsyncDisposable>)[Symbol.asyncDispose]?.();
});

test("without an outbox queue, a delivery waits for its host's slot where it is", async () => {
  await using host = await startLoopbackHost("127.0.0.1", slow(100));
  const { federation, events } = harness(undefined, { hostPolicy: { concurrency: 2 } });
  await sendToFollowers(federation, [host], 6);
  assertEquals(posts(host).length, 6);
  assertEquals(host.maxInFlight, 2);
  assertEquals(outbox(events, "completed").length, 6);
});
