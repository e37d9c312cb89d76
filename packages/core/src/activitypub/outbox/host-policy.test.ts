// The host policy of deliveries, against real HTTP servers on loopback
// addresses: blocked hosts receive nothing, and a Retry-After makes the
// host's deliveries wait without spending attempts.
import { assert, assertEquals, assertInstanceOf, test, waitUntil } from "@fedify/fixture";
import { Create, Note, Person } from "@fedify/vocab";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import type { MessageEvent } from "../../processing/events.ts";
import { durationToMilliseconds, millisecondsToDuration } from "../../time/duration.ts";
import { testKeyPair, withWorkers } from "../../federation/testdata/test-support.ts";
import {
  type HostAnswer,
  type LoopbackHost,
  startLoopbackHost,
} from "../host-policy/testdata/loopback-hosts.ts";
import { BlockedHostError } from "./errors.ts";

const base = new URL("https://example.com/");

interface Harness {
  readonly federation: Federation<void>;
  readonly events: MessageEvent[];
  /** How many times the sender's key pairs were asked for. */
  keyReads: number;
}

function harness(
  queue: InProcessMessageQueue,
  options: Partial<FederationOptions<void>>,
): Harness {
  const federation = createFederation<void>({
    kv: options.kv ?? new MemoryKvStore(),
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxRetryPolicy: ({ attempts }) => attempts >= 20 ? null : millisecondsToDuration(10),
    ...options,
  });
  const state: Harness = { federation, events: [], keyReads: 0 };
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
    const [key] = await ctx.getActorKeyPairs(identifier);
    return new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: key.cryptographicKey,
    });
  }).setKeyPairsDispatcher(async () => {
    state.keyReads++;
    return [await testKeyPair()];
  });
  for (const type of ["completed", "retrying", "failed", "dropped"] as const) {
    federation.on(type, (event) => void state.events.push(event));
  }
  return state;
}

function activity(n: number): Create {
  return new Create({
    id: new URL(`https://example.com/activities/${n}`),
    actor: new URL("https://example.com/users/alice"),
    object: new Note({ content: `Note ${n}` }),
  });
}

function sendTo(federation: Federation<void>, n: number, inbox: URL): Promise<void> {
  return federation.createContext(base, undefined).sendActivity(
    { identifier: "alice" },
    { id: new URL("/users/bob", inbox), inboxId: inbox },
    activity(n),
  );
}

function posts(host: LoopbackHost) {
  return host.requests.filter((request) => request.method === "POST");
}

function outboxEvents(events: readonly MessageEvent[], type: MessageEvent["type"]) {
  return events.filter((event) => event.kind === "outbox" && event.type === type);
}

async function startHosts(
  addresses: readonly string[],
  answer?: (index: number) => HostAnswer,
): Promise<LoopbackHost[]> {
  return await Promise.all(
    addresses.map((address) =>
      startLoopbackHost(address, answer == null ? undefined : (_request, index) => answer(index))
    ),
  );
}

test("a fan-out to 50 followers sends nothing to blocked hosts and delivers to the others", async () => {
  const hosts = await startHosts(["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]);
  try {
    await using queue = new InProcessMessageQueue();
    const { federation, events } = harness(queue, {
      hostPolicy: { block: ["127.0.0.2", "127.0.0.4"] },
    });
    const followers = Array.from({ length: 50 }, (_, i) => {
      const id = new URL(`/users/u${i}`, hosts[i % hosts.length].url);
      return { id, inboxId: new URL(`${id.href}/inbox`), endpoints: null };
    });
    federation.setFollowersDispatcher(
      "/users/{identifier}/followers",
      () => ({ items: followers, nextCursor: null }),
    );
    await withWorkers(federation, async () => {
      await federation.createContext(base, undefined).sendActivity(
        { identifier: "alice" },
        "followers",
        activity(1),
        { fanout: "force" },
      );
      await waitUntil(() => outboxEvents(events, "completed").length === 30, {
        what: () => `30 deliveries; ${outboxEvents(events, "completed").length} so far`,
      });
    });
    for (const index of [0, 2, 4]) assertEquals(posts(hosts[index]).length, 10);
    assertEquals(hosts[1].requests.length, 0);
    assertEquals(hosts[3].requests.length, 0);
    // Left out of the fan-out: never enqueued, so never dropped either.
    assertEquals(events.filter((event) => event.kind === "outbox").length, 30);
    assertEquals(events.filter((event) => event.kind === "fanout")[0]?.type, "completed");
  } finally {
    await Promise.all(hosts.map((host) => host.close()));
  }
});

test("a queued delivery whose host is blocked by then is dropped without a request or a key read", async () => {
  await using host = await startLoopbackHost("127.0.0.1");
  await using queue = new InProcessMessageQueue();
  const blocked = new Set<string>();
  const state = harness(queue, { hostPolicy: { block: (name) => blocked.has(name) } });
  const { federation, events } = state;
  await sendTo(federation, 1, new URL("/users/bob/inbox", host.url));
  blocked.add("127.0.0.1");
  state.keyReads = 0;
  await withWorkers(federation, async () => {
    await waitUntil(() => outboxEvents(events, "dropped").length === 1, {
      what: "the delivery to be dropped",
    });
  });
  const [dropped] = outboxEvents(events, "dropped");
  assert(dropped.type === "dropped");
  assert(dropped.reason.includes("blocked"), dropped.reason);
  assertInstanceOf(dropped.error, BlockedHostError);
  assertEquals(dropped.error.host, "127.0.0.1");
  assertEquals(host.requests.length, 0);
  assertEquals(state.keyReads, 0);
});

test("sendActivity() to a blocked host's inbox sends nothing, with or without an outbox queue", async () => {
  await using host = await startLoopbackHost("127.0.0.1");
  await using queue = new InProcessMessageQueue();
  const queued = harness(queue, { hostPolicy: { block: ["127.0.0.1"] } });
  const direct = harness(queue, {
    queue: undefined,
    hostPolicy: { block: ["127.0.0.1"] },
  });
  await withWorkers(queued.federation, async () => {
    await sendTo(queued.federation, 1, new URL("/users/bob/inbox", host.url));
    await sendTo(direct.federation, 2, new URL("/users/bob/inbox", host.url));
  });
  assertEquals(host.requests.length, 0);
  assertEquals(queued.events.length + direct.events.length, 0);
});

/**
 * Sends activity 1, which its host answers `first`, then (once that
 * answer is given) activity 2 to the same host; returns the POSTs and the
 * events once both were delivered.
 */
async function deliverAfter(
  first: () => HostAnswer,
  options: Partial<FederationOptions<void>>,
) {
  await using host = await startLoopbackHost(
    "127.0.0.1",
    (_request, index) => index === 0 ? first() : { status: 202 },
  );
  await using queue = new InProcessMessageQueue();
  const { federation, events } = harness(queue, options);
  await withWorkers(federation, async () => {
    await sendTo(federation, 1, new URL("/users/bob/inbox", host.url));
    await waitUntil(() => host.requests.length >= 1, { what: "the first POST" });
    await sendTo(federation, 2, new URL("/users/carol/inbox", host.url));
    await waitUntil(() => outboxEvents(events, "completed").length === 2, {
      what: "both deliveries",
    });
  });
  return { posts: posts(host), events, federation, host: host.url.host };
}

test("a 429 with Retry-After: 2 makes the host's deliveries wait 2 s, spending no attempt", async () => {
  const { posts, events } = await deliverAfter(
    () => ({ status: 429, headers: { "Retry-After": "2" } }),
    { hostPolicy: {} },
  );
  // No second knock on a 429: the host asked for a pause.
  assertEquals(posts.length, 3);
  for (const later of posts.slice(1)) assert(later.at - posts[0].at >= 2000);
  const waits = outboxEvents(events, "retrying");
  assert(waits.length >= 1);
  for (const event of waits) {
    assert(event.type === "retrying" && event.reason === "wait", JSON.stringify(event));
    assertEquals(event.attempt, 0);
  }
  for (const event of outboxEvents(events, "completed")) assertEquals(event.attempt, 0);
});

test("a 503 with an HTTP-date Retry-After waits until that date", async () => {
  const { posts, events } = await deliverAfter(
    () => ({
      status: 503,
      headers: { "Retry-After": new Date(Date.now() + 3000).toUTCString() },
    }),
    { hostPolicy: {} },
  );
  assertEquals(posts.length, 3);
  // The date has whole seconds: at least 2 s after the answer.
  for (const later of posts.slice(1)) assert(later.at - posts[0].at >= 2000);
  assert(
    outboxEvents(events, "retrying").every((e) => e.type === "retrying" && e.reason === "wait"),
  );
});

test("a huge Retry-After is capped by hostPolicy.retryAfter.max", async () => {
  const { posts, events } = await deliverAfter(
    () => ({ status: 429, headers: { "Retry-After": "86400" } }),
    { hostPolicy: { retryAfter: { max: { seconds: 1 } } } },
  );
  assertEquals(posts.length, 3);
  for (const later of posts.slice(1)) assert(later.at - posts[0].at >= 1000);
  const [first] = outboxEvents(events, "retrying");
  assert(first.type === "retrying" && first.reason === "wait");
  assert(durationToMilliseconds(first.delay!, "delay") <= 1000);
  assert(String(first.error).includes("capped"), String(first.error));
});

test("without hostPolicy, or with retryAfter: false, a Retry-After is a failed attempt", async () => {
  for (const options of [{}, { hostPolicy: { retryAfter: false as const } }]) {
    const { events } = await deliverAfter(
      () => ({ status: 429, headers: { "Retry-After": "2" } }),
      options,
    );
    const [retry] = outboxEvents(events, "retrying");
    assert(retry.type === "retrying" && retry.reason === "error", JSON.stringify(options));
    const attempts = outboxEvents(events, "completed").map((event) => event.attempt).sort();
    assertEquals(attempts, [0, 1]);
  }
});

test("host health does not count a Retry-After wait as a failure of the host", async () => {
  const { federation, host, events } = await deliverAfter(
    () => ({ status: 429, headers: { "Retry-After": "1" } }),
    { hostPolicy: {}, hostHealth: { failureThreshold: 1 } },
  );
  const health = await federation.getHostHealth(host);
  assert(health == null || (health.healthy && health.consecutiveFailures === 0));
  assertEquals(outboxEvents(events, "completed").length, 2);
});

test("a Retry-After one federation was answered makes another sharing its store wait too", async () => {
  await using host = await startLoopbackHost(
    "127.0.0.1",
    (_request, index) =>
      index === 0 ? { status: 429, headers: { "Retry-After": "2" } } : { status: 202 },
  );
  const kv = new MemoryKvStore();
  await using firstQueue = new InProcessMessageQueue();
  await using secondQueue = new InProcessMessageQueue();
  const first = harness(firstQueue, { kv, hostPolicy: {} });
  const second = harness(secondQueue, { kv, hostPolicy: {} });
  await withWorkers(first.federation, async () => {
    await sendTo(first.federation, 1, new URL("/users/bob/inbox", host.url));
    await waitUntil(() => host.requests.length >= 1, { what: "the first POST" });
    await withWorkers(second.federation, async () => {
      await sendTo(second.federation, 2, new URL("/users/carol/inbox", host.url));
      await waitUntil(() => outboxEvents(second.events, "completed").length === 1, {
        what: "the other federation's delivery",
      });
    });
  });
  const [answered, later] = posts(host);
  assert(later.at - answered.at >= 2000);
  const [wait] = outboxEvents(second.events, "retrying");
  assert(wait?.type === "retrying" && wait.reason === "wait");
});

test("a block function that throws fails the attempt, which is retried, not dropped", async () => {
  await using host = await startLoopbackHost("127.0.0.1");
  await using queue = new InProcessMessageQueue();
  let calls = 0;
  const { federation, events } = harness(queue, {
    hostPolicy: {
      block: () => {
        // The second call is the worker's first attempt.
        if (++calls === 2) throw new Error("the moderation service is down");
        return false;
      },
    },
  });
  await withWorkers(federation, async () => {
    await sendTo(federation, 1, new URL("/users/bob/inbox", host.url));
    await waitUntil(() => outboxEvents(events, "completed").length === 1, {
      what: "the delivery",
    });
  });
  const [retry] = outboxEvents(events, "retrying");
  assert(retry.type === "retrying" && retry.reason === "error");
  assertEquals(outboxEvents(events, "completed")[0].attempt, 1);
  assertEquals(outboxEvents(events, "dropped").length, 0);
  assertEquals(posts(host).length, 1);
});
