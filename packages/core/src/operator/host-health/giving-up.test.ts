// Host health that ends, and failed deliveries kept: real deliveries to a
// loopback inbox; the store-dependent path runs on every KvStore in
// @fedwork/testing's testFailedDeliveries suite.
import {
  assert,
  assertEquals,
  assertThrows,
  startTestServer,
  test,
  waitUntil,
} from "@fedify/fixture";
import { Create, Note } from "@fedify/vocab";
import { MemoryKvStore } from "../../kv/memory-kv-store.ts";
import { InProcessMessageQueue } from "../../queue/in-process-message-queue.ts";
import { FederationOptionError } from "../../options/federation-option-error.ts";
import { UnknownOptionError } from "../../options/known-options.ts";
import { createFederation, type Federation } from "../../federation/federation.ts";
import type { FederationOptions } from "../../federation/options.ts";
import type { MessageFailedEvent } from "../../processing/events.ts";
import { loopbackFederation, withWorkers } from "../../federation/testdata/test-support.ts";

const base = new URL("https://example.com/");

function federationOn(
  queue: InProcessMessageQueue,
  options: Partial<FederationOptions<void>>,
): Federation<void> {
  return loopbackFederation(queue, options, { attempts: 20, delayMs: 10 });
}

function send(federation: Federation<void>, n: number, inbox: URL): Promise<void> {
  const ctx = federation.createContext(base, undefined);
  return ctx.sendActivity(
    { identifier: "alice" },
    { id: new URL("https://remote.example/users/bob"), inboxId: inbox },
    new Create({
      id: new URL(`https://example.com/activities/${n}`),
      actor: new URL("https://example.com/users/alice"),
      object: new Note({ content: `Note ${n}` }),
    }),
  );
}

async function failedDeliveries(federation: Federation<void>): Promise<number> {
  return (await federation.countFailedTasks({ kind: "delivery" })).get("fedwork:delivery") ?? 0;
}

test("a dead host takes one delivery after its cool-down, and its success revives the host", async () => {
  let up = false;
  const received: string[] = [];
  await using server = await startTestServer(async (request) => {
    if (!up) return new Response("down", { status: 503 });
    if (request.method === "POST") received.push((await request.json()).id);
    return new Response(null, { status: 202 });
  });
  const inbox = new URL("/inbox", server.url);
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, {
    hostHealth: {
      failureThreshold: 1,
      initialProbeDelay: { milliseconds: 10 },
      maxProbeDelay: { milliseconds: 10 },
      maxProbeAttempts: 1,
      deadHostCooldown: { milliseconds: 200 },
    },
  });
  await withWorkers(federation, async () => {
    await send(federation, 1, inbox);
    await waitUntil(async () => await failedDeliveries(federation) === 1, {
      what: "the first delivery to fail for good",
    });
    const health = await federation.getHostHealth(server.url.host);
    assertEquals(health?.dead, true);
    // The host stays down for the second delivery, so the test holds however
    // slowly the machine runs: seen within the cool-down, that delivery must
    // have failed at once without a request; seen later, it may have been a
    // trial that failed and started a new cool-down.
    const posts = server.requests.filter((request) => request.method === "POST").length;
    await send(federation, 2, inbox);
    await waitUntil(async () => await failedDeliveries(federation) === 2, {
      what: "the second delivery to fail",
    });
    const secondFailedAt = Date.now();
    if (secondFailedAt - health!.since.getTime() < 200) {
      assertEquals(server.requests.filter((r) => r.method === "POST").length, posts);
    }
    up = true;
    // Past any cool-down the second delivery may have started.
    await waitUntil(() => Date.now() - secondFailedAt > 250, { what: "the cool-down to pass" });
    await send(federation, 3, inbox);
    // The inbox records the trial before its response reaches the worker,
    // which revives the host only then: wait for both.
    await waitUntil(
      async () =>
        received.length > 0 && (await federation.getHostHealth(server.url.host))?.healthy === true,
      { what: "the trial delivery to revive the host" },
    );
    assertEquals(received, ["https://example.com/activities/3"]);
  });
});

test("deliveries past hostHealth.maxParkedDeliveries fail for good instead of being parked", async () => {
  await using server = await startTestServer(() => new Response("down", { status: 503 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, {
    hostHealth: { failureThreshold: 1, initialProbeDelay: { hours: 1 }, maxParkedDeliveries: 2 },
  });
  await withWorkers(federation, async () => {
    for (let n = 0; n < 5; n++) await send(federation, n, new URL("/inbox", server.url));
    await waitUntil(
      async () =>
        await failedDeliveries(federation) === 3 &&
        (await federation.getHostHealth(server.url.host))?.parkedDeliveries === 2,
      { what: "two parked and three failed deliveries" },
    );
    const { records } = await federation.listFailedTasks({ kind: "delivery" });
    for (const record of records) assert(record.error?.message.includes("maxParkedDeliveries"));
  });
});

test("parked deliveries past hostHealth.parkedRetention fail for good at the next probe", async () => {
  await using server = await startTestServer(() => new Response("down", { status: 503 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, {
    hostHealth: {
      failureThreshold: 1,
      initialProbeDelay: { milliseconds: 50 },
      maxProbeDelay: { milliseconds: 50 },
      maxProbeAttempts: 1000,
      maxUnhealthyDuration: { hours: 1 },
      parkedRetention: { milliseconds: 20 },
    },
  });
  await withWorkers(federation, async () => {
    for (let n = 0; n < 2; n++) await send(federation, n, new URL("/inbox", server.url));
    await waitUntil(async () => await failedDeliveries(federation) === 2, {
      what: "both parked deliveries to expire",
    });
    const { records } = await federation.listFailedTasks({ kind: "delivery" });
    for (const record of records) assert(record.error?.message.includes("parkedRetention"));
    const health = await federation.getHostHealth(server.url.host);
    assertEquals([health?.dead, health?.parkedDeliveries], [false, 0]);
  });
});

test("keepFailedDeliveries: false keeps no delivery, though its failed event still fires", async () => {
  await using server = await startTestServer(() => new Response("gone", { status: 410 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, { keepFailedDeliveries: false });
  const failed: MessageFailedEvent[] = [];
  federation.on("failed", (event) => void failed.push(event));
  await withWorkers(federation, async () => {
    await send(federation, 1, new URL("/inbox", server.url));
    await waitUntil(() => failed.length === 1, { what: "the failed event" });
  });
  assertEquals(failed[0].kind, "outbox");
  assertEquals((await federation.listFailedTasks()).records, []);
});

test("a fan-out's deliveries that fail for good are kept one per inbox", async () => {
  await using server = await startTestServer(() => new Response("gone", { status: 410 }));
  await using queue = new InProcessMessageQueue();
  const federation = federationOn(queue, {});
  await withWorkers(federation, async () => {
    const ctx = federation.createContext(base, undefined);
    await ctx.sendActivity(
      { identifier: "alice" },
      [1, 2, 3].map((n) => ({
        id: new URL(`https://remote.example/users/${n}`),
        inboxId: new URL(`/users/${n}/inbox`, server.url),
      })),
      new Create({
        id: new URL("https://example.com/activities/fan"),
        actor: new URL("https://example.com/users/alice"),
        object: new Note({ content: "Hello, all" }),
      }),
      { fanout: "force" },
    );
    await waitUntil(async () => await failedDeliveries(federation) === 3, {
      what: "three failed deliveries",
    });
  });
  const { records } = await federation.listFailedTasks({ kind: "delivery" });
  assertEquals(
    records.map((record) => new URL(record.delivery!.inbox).pathname).sort(),
    ["/users/1/inbox", "/users/2/inbox", "/users/3/inbox"],
  );
  for (const record of records) {
    assertEquals([record.reason, record.delivery?.statusCode], ["permanent", 410]);
  }
  assertEquals((await federation.listFailedTasks({ kind: "task" })).records, []);
});

test("the give-up options and keepFailedDeliveries are checked when the federation is created", () => {
  const kv = new MemoryKvStore();
  const queue = new InProcessMessageQueue();
  assertThrows(
    // @ts-expect-error: a misspelt option
    () => createFederation({ kv, queue, hostHealth: { maxProbeAttemps: 3 } }),
    UnknownOptionError,
    "maxProbeAttempts",
  );
  for (
    const [name, hostHealth] of [
      ["hostHealth.maxProbeAttempts", { maxProbeAttempts: 0 }],
      ["hostHealth.maxParkedDeliveries", { maxParkedDeliveries: 1.5 }],
      ["hostHealth.maxUnhealthyDuration", { maxUnhealthyDuration: { seconds: 0 } }],
      ["hostHealth.parkedRetention", { parkedRetention: { seconds: -1 } }],
      ["hostHealth.deadHostCooldown", { deadHostCooldown: { seconds: 0 } }],
    ] as const
  ) {
    assertThrows(() => createFederation({ kv, queue, hostHealth }), FederationOptionError, name);
  }
  assertThrows(
    // @ts-expect-error: not a boolean
    () => createFederation({ kv, queue, keepFailedDeliveries: "yes" }),
    FederationOptionError,
    "keepFailedDeliveries",
  );
  assertThrows(
    // @ts-expect-error: a misspelt option
    () => createFederation({ kv, queue, keepFailedDelivery: false }),
    UnknownOptionError,
    "keepFailedDeliveries",
  );
});
