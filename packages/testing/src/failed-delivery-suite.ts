import { Create, Note, Person } from "@fedify/vocab";
import {
  createFederation,
  DeadHostError,
  type Federation,
  generateCryptoKeyPair,
  type HostHealthChange,
  InProcessMessageQueue,
  type KvStore,
  type MessageFailedEvent,
  millisecondsToDuration,
} from "@fedwork/core";
import { startTestServer } from "./http-server.ts";
import { createTestNamespace } from "./namespace.ts";
import { assert, assertEquals, assertInstanceOf, test } from "./test-runner.ts";
import { waitUntil } from "./wait.ts";

/**
 * Options for {@link testFailedDeliveries}.
 * @since 0.3.0
 */
export interface FailedDeliveryConformanceOptions {
  /** The store's name, in test names. */
  readonly name: string;
  /**
   * Opens the key–value store for a test; it must have `list()` (and
   * should have `cas()`).
   * @param namespace A fresh name per test.
   */
  open(namespace: string): KvStore | Promise<KvStore>;
  /** Closes the store, if needed. */
  close?(kv: KvStore): Promise<void>;
  /** Removes what a test left on the engine, if needed. */
  cleanup?(namespace: string): Promise<void>;
}

/**
 * Registers the test of failed deliveries and dead hosts over a key–value
 * store, against a real loopback inbox that goes down and comes back:
 * deliveries that fail for good are kept with the failed tasks (activity,
 * inbox, status, error, attempts), a host that stays down past
 * `hostHealth.maxProbeAttempts` is declared dead, its parked deliveries and
 * new ones fail for good into the store, a replay to it is refused until
 * `releaseHost()`, and the replays then reach the inbox once each; a
 * failed delivery can be discarded.
 * @param options The store's name and how to open it.
 * @since 0.3.0
 */
export function testFailedDeliveries(options: FailedDeliveryConformanceOptions): void {
  test(`${options.name}: failed deliveries are kept, a dead host's fail fast, and replays reach the inbox once released`, async () => {
    const namespace = createTestNamespace();
    const kv = await options.open(namespace);
    try {
      await run(kv);
    } finally {
      await options.close?.(kv);
      await options.cleanup?.(namespace);
    }
  });
}

async function run(kv: KvStore): Promise<void> {
  let up = false;
  const received: string[] = [];
  await using inbox = await startTestServer(async (request) => {
    if (!up) return new Response("down for maintenance", { status: 503 });
    if (request.method === "POST") received.push((await request.json()).id);
    return new Response(null, { status: 202 });
  });
  await using gone = await startTestServer(() => new Response("gone", { status: 410 }));
  await using queue = new InProcessMessageQueue();
  const changes: HostHealthChange[] = [];
  const federation = createFederation<void>({
    kv,
    queue,
    manuallyStartQueue: true,
    allowPrivateAddress: true,
    outboxRetryPolicy: ({ attempts }) => attempts >= 20 ? null : millisecondsToDuration(10),
    hostHealth: {
      failureThreshold: 2,
      initialProbeDelay: { milliseconds: 20 },
      maxProbeDelay: { milliseconds: 40 },
      maxProbeAttempts: 2,
      deadHostCooldown: false,
      onChange: (change) => void changes.push(change),
    },
  });
  await registerActor(federation);
  const failed: MessageFailedEvent[] = [];
  federation.on("failed", (event) => void failed.push(event));
  const completed = new Set<string>();
  federation.on("completed", (event) => {
    if (event.kind === "outbox") completed.add(event.messageId);
  });
  const host = inbox.url.host;
  const controller = new AbortController();
  const worker = federation.startQueue(undefined, { signal: controller.signal });
  try {
    const ctx = federation.createContext(new URL("https://example.com/"), undefined);
    const send = (n: number, to: URL) =>
      ctx.sendActivity(
        { identifier: "alice" },
        { id: new URL("https://remote.example/users/bob"), inboxId: to },
        new Create({
          id: new URL(`https://example.com/activities/${n}`),
          actor: ctx.getActorUri("alice"),
          object: new Note({ content: `Note ${n}` }),
        }),
      );
    for (let n = 0; n < 3; n++) await send(n, new URL("/inbox", inbox.url));
    await send(9, new URL("/inbox", gone.url));
    await waitUntil(
      async () =>
        (await federation.countFailedTasks({ kind: "delivery" })).get("fedwork:delivery") === 4,
      { what: "four failed deliveries", timeoutMs: 60_000 },
    );
    const health = await federation.getHostHealth(host);
    assertEquals([health?.dead, health?.healthy, health?.parkedDeliveries], [true, false, 0]);
    assertEquals(changes.map((change) => [change.healthy, change.dead ?? false]), [
      [false, false],
      [false, true],
    ]);
    assertEquals(failed.filter((event) => event.kind === "outbox").length, 4);
    assertEquals((await federation.countFailedTasks({ kind: "task" })).size, 0);
    const page = await federation.listFailedTasks({ kind: "delivery" });
    assertEquals(page.records.length, 4);
    const goneRecord = page.records.find((record) =>
      record.delivery?.inbox.startsWith(gone.url.origin)
    );
    assertEquals(goneRecord?.delivery?.statusCode, 410);
    assertEquals(goneRecord?.reason, "permanent");
    const deadRecords = page.records.filter((record) => record !== goneRecord);
    for (const record of deadRecords) {
      assertEquals([record.kind, record.taskName], ["delivery", "fedwork:delivery"]);
      assertEquals(record.delivery?.inbox, new URL("/inbox", inbox.url).href);
      assertEquals(record.delivery?.activityType, "Create");
      assert(record.attempts >= 1);
      assert(record.error != null);
    }
    const details = await federation.getFailedTask(deadRecords[0].id);
    assertEquals((details?.payload as { type?: string }).type, "Create");

    // A new delivery to the dead host fails at once: it never reaches it.
    const posts = inbox.requests.filter((request) => request.method === "POST").length;
    await send(3, new URL("/inbox", inbox.url));
    await waitUntil(
      async () => (await federation.countFailedTasks()).get("fedwork:delivery") === 5,
      { what: "the fifth failed delivery" },
    );
    assertEquals(inbox.requests.filter((request) => request.method === "POST").length, posts);
    const fast = (await federation.listFailedTasks({ kind: "delivery" })).records
      .find((record) => !deadRecords.includes(record) && record !== goneRecord)!;
    assertEquals(fast.error?.message.includes("dead"), true);

    // Replays are refused while the host is dead.
    let refusal: unknown;
    try {
      await federation.retryFailedTask(fast.id);
    } catch (error) {
      refusal = error;
    }
    assertInstanceOf(refusal, DeadHostError);
    assertEquals(await federation.discardFailedTask(goneRecord!.id), true);

    up = true;
    assertEquals(await federation.releaseHost(host), true);
    assertEquals((await federation.getHostHealth(host))?.healthy, true);
    const toReplay = (await federation.listFailedTasks({ kind: "delivery" })).records;
    assertEquals(toReplay.length, 4);
    // Parking completed some of these messages already: count the replays.
    completed.clear();
    for (const record of toReplay) await federation.retryFailedTask(record.id);
    await waitUntil(() => toReplay.every((record) => completed.has(record.id)), {
      what: () => `the four replays to complete; got ${completed.size}`,
    });
    await waitUntil(() => received.length >= 4, {
      what: () => `the four replayed deliveries; got ${received.length}`,
    });
    assertEquals(received.sort(), [0, 1, 2, 3].map((n) => `https://example.com/activities/${n}`));
    assertEquals((await federation.countFailedTasks()).size, 0);
  } finally {
    controller.abort();
    await worker;
  }
}

async function registerActor(federation: Federation<void>): Promise<void> {
  const keyPair = await generateCryptoKeyPair();
  federation.setActorDispatcher("/users/{identifier}", async (ctx, identifier) =>
    new Person({
      id: ctx.getActorUri(identifier),
      preferredUsername: identifier,
      publicKey: (await ctx.getActorKeyPairs(identifier))[0].cryptographicKey,
    })).setKeyPairsDispatcher(() => [keyPair]);
}
